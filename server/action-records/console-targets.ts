/**
 * What the browser console offers: the enrolled hosts (with whether their
 * guest reports in) and the active operations with their argument fields,
 * read from each operation's JSON Schema in its capability manifest — the
 * same schema the pipeline validates against, so the form cannot promise a
 * field the pipeline would refuse. The host is picked separately; `host`
 * is not a form field.
 */
import type { CapabilityRegistry } from "../capabilities";
import type { Database } from "../db";
import { listHostSummaries } from "../hosts/health";

export interface ConsoleField {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "object" | "array";
  required: boolean;
  description: string;
  enum: string[] | null;
  /** Long text (commands, code, file content) gets a text area. */
  multiline: boolean;
}

export interface ConsoleOperation {
  name: string;
  capability: string;
  mutating: boolean;
  description: string;
  fields: ConsoleField[];
}

export interface ConsoleTargets {
  hosts: Array<{ name: string; online: boolean; tier: string | null }>;
  operations: ConsoleOperation[];
}

const MULTILINE = new Set(["command", "code", "content", "stdin"]);
const TYPES = new Set(["string", "integer", "number", "boolean", "object", "array"]);

export async function consoleTargets(db: Database, registry: CapabilityRegistry): Promise<ConsoleTargets> {
  const hosts = (await listHostSummaries(db)).map((h) => ({ name: h.name, online: h.online, tier: h.tier }));
  const operations = registry
    .activeOperations()
    .filter((r) => (r.operation.input_schema as { properties?: Record<string, unknown> }).properties?.["host"] !== undefined)
    .map((r) => {
      const schema = r.operation.input_schema as { properties?: Record<string, { type?: string; description?: string; enum?: unknown[] }>; required?: string[] };
      const required = new Set(schema.required ?? []);
      const fields = Object.entries(schema.properties ?? {})
        .filter(([name]) => name !== "host")
        .map(([name, p]): ConsoleField => ({
          name,
          type: TYPES.has(p.type ?? "") ? (p.type as ConsoleField["type"]) : "string",
          required: required.has(name),
          description: p.description ?? "",
          enum: Array.isArray(p.enum) ? p.enum.map(String) : null,
          multiline: MULTILINE.has(name),
        }));
      return { name: r.operation.name, capability: r.manifest.id, mutating: r.operation.mutating, description: r.operation.description, fields };
    });
  return { hosts, operations };
}
