// The TypeScript peer for bench/cmd/suite: @ag-ui/a2a 0.0.6 behind the
// smallest Node HTTP server that serves AG-UI (POST in, SSE out). One
// A2AAgent is shared by all requests and run() is called per request (the
// cheapest way to use it: no per-request agent card fetch, no
// AbstractAgent.runAgent pipeline). Usage: node server.mjs <a2a-base-url> <port>
import http from "node:http";
import { A2AAgent } from "@ag-ui/a2a";
import { A2AClient } from "@a2a-js/sdk/client";
import { EventEncoder } from "@ag-ui/encoder";

const [upstream, port] = process.argv.slice(2);
const agent = new A2AAgent({ a2aClient: new A2AClient(upstream) });
const encoder = new EventEncoder();

http
  .createServer(async (req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
      return;
    }
    let body = "";
    for await (const chunk of req) body += chunk;
    const input = JSON.parse(body);
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    const sub = agent.run(input).subscribe({
      next: (ev) => res.write(encoder.encode(ev)),
      error: () => res.end(),
      complete: () => res.end(),
    });
    req.on("close", () => sub.unsubscribe());
  })
  .listen(Number(port), "127.0.0.1", () => console.log("listening"));
