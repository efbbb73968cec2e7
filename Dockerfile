# syntax=docker/dockerfile:1
# Multi-stage build of iac-code-agui: a static binary (CGO_ENABLED=0) on
# distroless/static, run as the non-root user 65532, with the state
# directory as a volume. See docs/operations.md.
#
#   docker build --build-arg VERSION=1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) -t iac-code-agui .
#   docker run -p 127.0.0.1:8000:8000 -v agui-state:/var/lib/iac-code-agui iac-code-agui

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
ARG VERSION=""
ARG COMMIT=""
# The same command as deploy/build.sh, which CI runs on every change.
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/iac-code-agui/iac-code-agui/internal/buildinfo.version=${VERSION} -X github.com/iac-code-agui/iac-code-agui/internal/buildinfo.commit=${COMMIT}" \
      -o /out/iac-code-agui ./cmd/iac-code-agui \
 && mkdir -p /out/state

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/iac-code-agui /usr/local/bin/iac-code-agui
# The volume's mount point belongs to the non-root user, so a fresh named
# volume is writable.
COPY --from=build --chown=65532:65532 /out/state /var/lib/iac-code-agui
USER 65532:65532
# 0.0.0.0 so that the published port reaches the server; put a TLS reverse
# proxy in front and set IAC_CODE_AGUI_AUTH_TOKEN (docs/operations.md).
ENV IAC_CODE_AGUI_HOST=0.0.0.0 \
    IAC_CODE_AGUI_PORT=8000 \
    IAC_CODE_AGUI_STATE_DIR=/var/lib/iac-code-agui \
    IAC_CODE_AGUI_LOG_FORMAT=json \
    HOME=/home/nonroot
VOLUME ["/var/lib/iac-code-agui"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/iac-code-agui", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/iac-code-agui"]
