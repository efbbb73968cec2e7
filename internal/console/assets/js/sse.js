// A Server-Sent Events reader over a fetch body. EventSource cannot POST or
// send an Authorization header, so the console reads the stream itself.

/**
 * Yields {data} for each event and {comment} for each comment line (the
 * adapter's ": heartbeat"). Handles LF, CRLF and CR line endings and
 * events split across chunks.
 */
export async function* readSSE(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let data = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let m;
      while ((m = /\r\n|\r|\n/.exec(buf))) {
        // A lone CR at the end may be the first half of CRLF.
        if (m[0] === "\r" && m.index === buf.length - 1) break;
        const line = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        if (line === "") {
          if (data.length) yield { data: data.join("\n") };
          data = [];
        } else if (line.startsWith(":")) {
          yield { comment: line.slice(1).trim() };
        } else {
          const i = line.indexOf(":");
          const field = i < 0 ? line : line.slice(0, i);
          let v = i < 0 ? "" : line.slice(i + 1);
          if (v.startsWith(" ")) v = v.slice(1);
          if (field === "data") data.push(v);
        }
      }
    }
  } finally {
    reader.releaseLock();
  }
}
