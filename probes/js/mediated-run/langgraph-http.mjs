// The mediated LangGraph.js probe: the B1/B2 workflow of
// frameworks/langgraph_interrupt.mjs (interrupt() in one node while a sibling
// node runs in the same superstep), whose effects are real HTTP POSTs sent
// through the proxy that `soundgate run` gives the agent (HTTP_PROXY). It runs
// inside the sandbox; the Go test impl/sandbox/escape/framework_probe_test.go
// drives it and owns the gate, the sink and the decision.
//
// Protocol with the driver (one line each way, stdout and stdin):
//   out "plan P1 gated=delete"    in "go"       the plan is registered at the gate
//   out "sibling status=N verdict=V"            the sibling's POST came back
//   out "interrupt {json}"        in "approve" | "reject"
//   out "gated status=N verdict=V"              only on approve
//   out "done out=[...]"                        then exit 0
// Environment: HTTP_PROXY (set by the sandbox), SOUNDGATE_RUN, SOUNDGATE_PROBE_SINK
// (the sink's base URL, e.g. http://127.0.0.1:40000).
import http from "node:http";
import { createInterface } from "node:readline";
import { StateGraph, Annotation, START, END, interrupt, Command, MemorySaver } from "@langchain/langgraph";

const PLAN = "P1";
// requestTimeoutMs bounds one POST; the proxy holds a request while the run is
// paused, so it is longer than any pause the driver makes.
const requestTimeoutMs = 45000;

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function readLine() {
  const { value, done } = await lines.next();
  if (done) throw new Error("driver closed stdin");
  return value.trim();
}
function say(line) {
  process.stdout.write(line + "\n");
}

// post sends one effect: an absolute-URI POST to the sink, through the proxy.
function post(path, key, body) {
  const proxy = new URL(process.env.HTTP_PROXY);
  const target = new URL(path, process.env.SOUNDGATE_PROBE_SINK);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: proxy.hostname, port: Number(proxy.port), method: "POST", path: target.href, agent: false,
      headers: {
        Host: target.host, "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(body),
        "Soundgate-Key": key, "Soundgate-Run": process.env.SOUNDGATE_RUN,
      },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => { text += d; });
      res.on("end", () => resolve({ status: res.statusCode, verdict: res.headers["soundgate-verdict"] || "", body: text.trim() }));
    });
    req.setTimeout(requestTimeoutMs, () => req.destroy(new Error(`POST ${path}: no answer in ${requestTimeoutMs} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

const State = Annotation.Root({
  out: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

const graph = new StateGraph(State)
  // plan registers the gated effect with the gate (through the driver) before
  // the superstep that holds the gated node and its sibling starts.
  .addNode("plan", async () => {
    say(`plan ${PLAN} gated=delete`);
    const ack = await readLine();
    if (ack !== "go") throw new Error(`driver answered ${JSON.stringify(ack)} to the plan`);
    return {};
  })
  .addNode("gated", async () => {
    const decision = interrupt({ plan: PLAN, ask: "approve delete?" });
    if (decision !== "approve") return { out: [`gated:${decision}`] };
    const r = await post("/delete", "delete", "delete P1\n");
    say(`gated status=${r.status} verdict=${r.verdict}`);
    return { out: [`gated:${r.status}`] };
  })
  .addNode("sibling", async () => {
    const r = await post("/send_email", "send_email", "send_email P1\n");
    say(`sibling status=${r.status} verdict=${r.verdict}`);
    return { out: [`sibling:${r.status}`] };
  })
  .addEdge(START, "plan")
  .addEdge("plan", "gated")
  .addEdge("plan", "sibling")
  .addEdge("gated", END)
  .addEdge("sibling", END)
  .compile({ checkpointer: new MemorySaver() });

const cfg = { configurable: { thread_id: "mediated-1" } };
let res = await graph.invoke({ out: [] }, cfg);
for (let round = 0; res.__interrupt__?.length; round++) {
  if (round >= 4) throw new Error("still interrupted after 4 resumes");
  say(`interrupt ${JSON.stringify(res.__interrupt__.map((i) => i.value))}`);
  const decision = await readLine();
  if (decision !== "approve" && decision !== "reject") throw new Error(`bad decision ${JSON.stringify(decision)}`);
  res = await graph.invoke(new Command({ resume: decision }), cfg);
}
say(`done out=${JSON.stringify(res.out)}`);
process.exit(0);
