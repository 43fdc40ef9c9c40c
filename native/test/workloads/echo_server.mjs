// Echo servers for the egress tests, run by the test inside a network
// namespace it created (`ip netns exec`): TCP on every port in argv[2]
// (comma-separated), UDP on argv[3]. Binds the wildcard of that namespace
// only. Answers "echo:<what it got>", prints "ready" once all listen, exits
// when its stdin closes (the test ending, or dying, closes it).
import { createServer } from "node:net";
import { createSocket } from "node:dgram";

const tcpPorts = (process.argv[2] ?? "").split(",").filter(Boolean).map(Number);
const udpPort = Number(process.argv[3] ?? "0");
let pending = tcpPorts.length + (udpPort ? 1 : 0);
const ready = () => { if (--pending === 0) process.stdout.write("ready\n"); };
for (const port of tcpPorts) {
  createServer((c) => {
    c.on("data", (d) => { c.end(`echo:${d.toString()}`); });
    c.on("error", () => {});
  }).listen({ port, host: "::", ipv6Only: false }, ready);
}
if (udpPort) {
  const u = createSocket({ type: "udp6", ipv6Only: false });
  u.on("message", (m, from) => { u.send(`echo:${m.toString()}`, from.port, from.address); });
  u.bind(udpPort, "::", ready);
}
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
process.stdin.on("close", () => process.exit(0));
