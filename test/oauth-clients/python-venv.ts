/**
 * A throwaway Python virtual environment with the official MCP Python SDK
 * (`mcp` from PyPI, pinned), made by the test itself and kept under the OS
 * temporary directory between runs, keyed by the pinned version.
 *
 * An install that fails is a test FAILURE naming what went wrong (PyPI
 * unreachable, no python3, no venv module) — never a skip: a test of "a
 * real Python client connects" that passes without one proves nothing.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** The `mcp` release these tests run against (the newest on PyPI when they were written). */
export const MCP_PYTHON_VERSION = "2.3.0";

/** The client script the e2e spec runs inside the venv. */
export const PYTHON_OAUTH_CLIENT = path.join(import.meta.dirname, "mcp_oauth_client.py");

export interface PythonVenv {
  dir: string;
  python: string;
}

function venvDir(): string {
  // Per user: the cache must never be a directory another local user made (it would run their code).
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return path.join(os.tmpdir(), `leasehold-mcp-python-${MCP_PYTHON_VERSION}-uid${uid}`);
}

/**
 * Refuses a cached venv that someone else could have written: the directory
 * lives in the shared temporary directory, and a venv is code this test runs.
 */
function assertOwnedPrivately(dir: string): void {
  const st = fs.lstatSync(dir);
  const uid = typeof process.getuid === "function" ? process.getuid() : st.uid;
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) {
    throw new Error(`refusing the cached Python venv ${dir}: it is not a directory owned by uid ${uid} and writable only by it; remove it and run again`);
  }
}

function run(command: string, args: string[], timeoutMs: number): { ok: boolean; output: string } {
  const r = spawnSync(command, args, { encoding: "utf8", timeout: timeoutMs, env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1", PYTHONDONTWRITEBYTECODE: "1" } });
  const output = `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? `\n${String(r.error)}` : ""}`;
  return { ok: r.status === 0, output };
}

function tail(text: string, lines = 25): string {
  return text.trim().split("\n").slice(-lines).join("\n");
}

/**
 * The venv with `mcp==MCP_PYTHON_VERSION` installed, made on first use
 * (a minute or several: pip resolves the SDK's dependencies). A venv whose
 * install did not finish (no marker file) is made again from scratch.
 */
export function ensurePythonMcpVenv(log: (line: string) => void = () => undefined): PythonVenv {
  const dir = venvDir();
  const python = path.join(dir, "bin", "python");
  const marker = path.join(dir, ".leasehold-installed");
  if (fs.existsSync(dir)) {
    assertOwnedPrivately(dir);
    if (fs.existsSync(marker) && fs.readFileSync(marker, "utf8").trim() === `mcp==${MCP_PYTHON_VERSION}`) return { dir, python };
    fs.rmSync(dir, { recursive: true, force: true });
  }
  fs.mkdirSync(dir, { mode: 0o700 });
  const made = run("python3", ["-m", "venv", dir], 120_000);
  if (!made.ok) throw new Error(`could not create a Python virtual environment (python3 -m venv ${dir}); install python3 and python3-venv:\n${tail(made.output)}`);
  log(`installing mcp==${MCP_PYTHON_VERSION} into ${dir}`);
  // --retries 1: an index that cannot be reached fails quickly and pip names it, instead of retrying for minutes.
  const pip = run(python, ["-m", "pip", "install", "--retries", "1", "--timeout", "30", `mcp==${MCP_PYTHON_VERSION}`], 900_000);
  if (!pip.ok) {
    throw new Error(`pip install mcp==${MCP_PYTHON_VERSION} failed — the Python SDK end-to-end test needs PyPI (or the configured pip index) to be reachable:\n${tail(pip.output)}`);
  }
  const check = run(python, ["-c", "import mcp.client.auth, mcp.client.streamable_http, importlib.metadata as m; print(m.version('mcp'))"], 60_000);
  if (!check.ok || check.output.trim() !== MCP_PYTHON_VERSION) {
    throw new Error(`mcp ${MCP_PYTHON_VERSION} was installed but does not import as expected:\n${tail(check.output)}`);
  }
  fs.writeFileSync(marker, `mcp==${MCP_PYTHON_VERSION}\n`);
  return { dir, python };
}
