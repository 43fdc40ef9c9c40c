/**
 * The audit explorer end to end: an auditor opens /audit, sees entries and
 * checkpoints with the local guest's witness cosignatures, pins the log key
 * (obtained out of band with `leasehold ledger key`), and the browser
 * verifies the export itself. Then ONE ledger row is changed in the hub's
 * real database while the hub runs, and the same button names that index.
 * The Export button's file is checked with the `leasehold verify` CLI.
 *
 * Why this spec runs a hub of its own: the Playwright config's hub keeps its
 * PGlite database inside its process, so nothing else can open it to tamper
 * with it while it runs. This hub is the same `leasehold start`, on its own
 * port, with DATABASE_URL pointing at a throwaway PostgreSQL server — which
 * the test then edits directly, as an attacker with database access would.
 */
import fs from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import postgres from "postgres";
import { freePort, startTemporaryPostgres, type TemporaryPostgres } from "../tools/lib/postgres.mjs";
import { SIGNATURE_TYPE, generateSignerKey } from "../server/trust/ledger/note";
import { runCli, startHub, tempDir, type RunningHub } from "../test/support/hub-process";
import { signedInOnOwnHub } from "./support/admins";

let pg: TemporaryPostgres | undefined;
let hub: RunningHub | undefined;
let base = "";
let sql: postgres.Sql | undefined;

const RESULTS = path.join(import.meta.dirname, "..", "test-results");

function cliEnv(): Record<string, string> {
  return { LEASEHOLD_DATA_DIR: hub!.dataDir, LEASEHOLD_PORT: String(hub!.port), DATABASE_URL: pg!.url };
}

async function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli(args, cliEnv(), 120_000);
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(240_000);
  pg = await startTemporaryPostgres();
  const port = await freePort();
  // The same hub a person starts, local guest (and so a witness) included; only the database differs.
  hub = await startHub({ LEASEHOLD_PORT: String(port), LEASEHOLD_DATA_DIR: path.join(tempDir("lh-e2e-audit-"), "data"), DATABASE_URL: pg.url }, 180_000);
  base = `http://localhost:${port}`;
  sql = postgres(pg.url, { max: 1, onnotice: () => undefined });
});

test.afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await hub?.stop();
  pg?.stop();
});

/** Waits until every entry is integrated and the newest checkpoint carries a witness cosignature. */
async function settledAndCosigned(): Promise<number> {
  let size = 0;
  await expect
    .poll(
      async () => {
        const [row] = await sql!<{ pending: string; size: string | null; cosigned: string }[]>`
          select (select count(*) from ledger_entries where leaf_index is null) as pending,
                 (select max(tree_size) from ledger_checkpoints) as size,
                 (select count(*) from ledger_cosignatures where tree_size = (select max(tree_size) from ledger_checkpoints)) as cosigned`;
        size = Number(row?.size ?? 0);
        return Number(row?.pending) === 0 && size > 0 && Number(row?.cosigned) > 0;
      },
      { timeout: 60_000, intervals: [500] },
    )
    .toBe(true);
  return size;
}

async function download(page: Page, name: string): Promise<string> {
  const [file] = await Promise.all([page.waitForEvent("download"), page.getByTestId("audit-export").click()]);
  const target = path.join(tempDir("lh-e2e-audit-export-"), name);
  await file.saveAs(target);
  return target;
}

test("the auditor reads people, not digests: actors and targets named, a row expanded in full, filters by actor and text, a pinned witness key and the passkey check in the browser's verdict", async ({ page }) => {
  test.setTimeout(240_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signedInOnOwnHub(page, base, "auditor", cli);
  await settledAndCosigned();
  await page.goto(`${base}/audit`);
  await expect(page.getByTestId("audit-entry").first()).toBeVisible();

  // The CLI made the auditor: its admin/1 entry names the CLI as actor and the new admin as target.
  await page.getByTestId("audit-filter-actor").fill("cli");
  await page.getByRole("button", { name: "Filter" }).click();
  const created = page.getByTestId("audit-entry").filter({ hasText: "admin.create" }).first();
  await expect(created).toContainText("system (cli)");
  await expect(created).toContainText(/target_digest=admin auditor-/);
  await created.getByRole("button", { name: /Show entry \d+ in full/ }).click();
  const detail = page.getByTestId("audit-entry-detail");
  await expect(detail).toContainText('"type": "admin/1"');
  await expect(detail.getByRole("link", { name: /^admin auditor-/ })).toHaveAttribute("href", "/users");

  // The local guest's own entries, by its name.
  await page.getByTestId("audit-filter-actor").fill("local");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.getByTestId("audit-actor-name").first()).toHaveText("host local");
  for (const name of await page.getByTestId("audit-actor-name").all()) await expect(name).toHaveText("host local");

  // Text anywhere in the entry.
  await page.getByRole("button", { name: "Clear" }).click();
  await page.getByTestId("audit-filter-text").fill("admin.create");
  await page.getByRole("button", { name: "Filter" }).click();
  for (const row of await page.getByTestId("audit-entry").all()) await expect(row).toContainText("admin.create");

  // The verdict with the witness key pinned (it must have cosigned the latest checkpoint) and passkeys required at high.
  const keyOut = await cli(["ledger", "key"]);
  const logKey = keyOut.stdout.trim().split("\n").find((l) => /^\S+\+[0-9a-f]{8}\+\S+$/.test(l))!;
  const witnesses = await cli(["ledger", "witness", "list"]);
  const witnessKey = witnesses.stdout.trim().split("\n")[0]?.split(/\s+/)[2];
  expect(witnessKey, witnesses.stdout + witnesses.stderr).toMatch(/^\S+\+[0-9a-f]{8}\+\S+$/);
  await page.getByTestId("audit-key-input").fill(logKey);
  await page.getByTestId("audit-pin").click();
  await page.getByTestId("audit-witness-input").fill(witnessKey!);
  await page.getByTestId("audit-witness-pin").click();
  await expect(page.getByTestId("audit-witness-list")).toContainText(witnessKey!);
  await page.getByTestId("audit-require-passkey").check();
  await page.getByTestId("audit-verify").click();
  await expect(page.getByTestId("audit-verdict")).toContainText("VERIFIED", { timeout: 60_000 });
  await expect(page.getByTestId("audit-cosignatures-verdict")).toContainText(/[1-9]\d* verified with pinned witness keys/);
  await expect(page.getByTestId("audit-cosignatures-verdict")).toContainText("0 intact but unchecked");
  await expect(page.getByTestId("audit-cosignatures-verdict")).toContainText("cosigned by every pinned witness");
  await expect(page.getByTestId("audit-passkeys")).toContainText("0 passkey-signed approvals and 0 passkey-signed grants verified");

  // A witness key nobody cosigned with, pinned: required on the latest checkpoint, so the verdict fails.
  const stranger = generateSignerKey("witness.example/stranger", SIGNATURE_TYPE.cosignatureV1).verifier;
  await page.getByTestId("audit-witness-input").fill(stranger);
  await page.getByTestId("audit-witness-pin").click();
  await page.getByTestId("audit-verify").click();
  await expect(page.getByTestId("audit-verdict")).toContainText("FAILED", { timeout: 60_000 });
  await page.getByRole("button", { name: "Forget witness key witness.example/stranger" }).click();
  await expect(page.getByTestId("audit-witness-list")).not.toContainText("stranger");
});

test("an auditor verifies the log in the browser; after one ledger row is changed in the database the browser names that index; the Export file is what `leasehold verify` reads", async ({ page }) => {
  test.setTimeout(300_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signedInOnOwnHub(page, base, "auditor", cli);
  const size = await settledAndCosigned();

  await page.goto(`${base}/audit`);
  await expect(page.getByRole("heading", { name: "Audit log" })).toBeVisible();
  await expect(page.getByTestId("audit-entry").first()).toBeVisible();
  expect(await page.getByTestId("audit-entry").count()).toBeGreaterThan(0);
  await expect(page.getByTestId("audit-checkpoint").first()).toContainText(`Size ${size}`);
  await expect(page.getByTestId("audit-cosignature").first()).toContainText("key ");

  // Filtering by type shows only that type (the hub enrolled its local guest: host/1 entries exist).
  await page.getByTestId("audit-filter-type").selectOption("host/1");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.getByTestId("audit-entry").first()).toContainText("host/1");
  for (const row of await page.getByTestId("audit-entry").all()) await expect(row).toContainText("host/1");
  await page.getByTestId("audit-filter-type").selectOption("");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.getByTestId("audit-entry").filter({ hasText: "admin/1" }).first()).toBeVisible();

  // The hub's own key is offered, with the warning; the auditor pins the key the CLI printed (out of band).
  const keyOut = await cli(["ledger", "key"]);
  const logKey = keyOut.stdout.trim().split("\n").find((l) => /^\S+\+[0-9a-f]{8}\+\S+$/.test(l))!;
  expect(logKey, keyOut.stdout + keyOut.stderr).toBeDefined();
  await expect(page.getByTestId("audit-key-input")).toHaveValue(logKey);
  await expect(page.getByTestId("audit-key-warning")).toContainText("out of band");
  await page.getByTestId("audit-key-input").fill(logKey);
  await page.getByTestId("audit-pin").click();
  await expect(page.getByTestId("audit-pinned")).toContainText(logKey);
  expect(await page.evaluate(() => window.localStorage.getItem("leasehold.audit.pinnedLogKey"))).toBe(logKey);
  await expect(page.getByTestId("audit-key-changed")).toHaveCount(0);

  // The verdict comes from the browser: while it runs, the only request that is not a read-only listing is the export download.
  const during: string[] = [];
  const record = (req: { url(): string }) => during.push(new URL(req.url()).pathname);
  page.on("request", record);
  await page.getByTestId("audit-verify").click();
  await expect(page.getByTestId("audit-verdict")).toContainText("VERIFIED", { timeout: 60_000 });
  page.off("request", record);
  expect(during).toContain("/api/audit/export");
  expect(during.filter((p) => p !== "/api/audit/export" && !/^\/api\/trpc\/audit\.[a-z]+(,audit\.[a-z]+)*$/.test(p))).toEqual([]);
  await expect(page.getByTestId("audit-verdict")).toContainText(/all \d+ entries are covered/);
  fs.mkdirSync(RESULTS, { recursive: true });
  await page.screenshot({ path: path.join(RESULTS, "audit-explorer-1280.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(RESULTS, "audit-explorer-390.png"), fullPage: true });
  // The first screens at phone size, as a person sees them (the full page is very tall).
  await page.screenshot({ path: path.join(RESULTS, "audit-explorer-390-top.png") });
  await page.getByTestId("audit-entries").scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(RESULTS, "audit-explorer-390-entries.png") });
  await page.setViewportSize({ width: 1280, height: 900 });

  // The Export button's file, checked by the CLI.
  const clean = await download(page, "clean.jsonl");
  const verified = await cli(["verify", clean, "--key", logKey]);
  expect(verified.stdout).toContain("VERIFIED");
  expect(verified.code).toBe(0);

  // A different pinned key (same origin, another key pair): the page flags that the hub serves another key, and the verdict fails.
  const impostor = generateSignerKey(logKey.split("+")[0]!).verifier;
  await page.evaluate((k) => window.localStorage.setItem("leasehold.audit.pinnedLogKey", k), impostor);
  await page.reload();
  await expect(page.getByTestId("audit-key-changed")).toContainText("different log key");
  await page.getByTestId("audit-verify").click();
  await expect(page.getByTestId("audit-verdict")).toContainText(`but the key given is ${impostor}`, { timeout: 60_000 });
  await expect(page.getByTestId("audit-verdict")).toContainText("FAILED");
  await page.getByTestId("audit-key-input").fill(logKey);
  await page.getByTestId("audit-pin").click();
  await expect(page.getByTestId("audit-key-changed")).toHaveCount(0);

  // Tamper: one stored entry, in the hub's real database, while it runs (its time's first digit changed; still valid JSON).
  const victim = Math.floor(size / 2);
  const changed = await sql!`
    update ledger_entries set body = convert_to(regexp_replace(convert_from(body, 'UTF8'), '"time":"2', '"time":"1'), 'UTF8')
    where leaf_index = ${victim} returning leaf_index`;
  expect(changed.count).toBe(1);

  // Pinned key survives a reload (localStorage); the browser now names the changed index.
  await page.reload();
  await expect(page.getByTestId("audit-pinned")).toContainText(logKey);
  await page.getByTestId("audit-verify").click();
  await expect(page.getByTestId("audit-verdict")).toContainText("FAILED", { timeout: 60_000 });
  await expect(page.getByTestId("audit-bad-index")).toHaveText(`First bad index: ${victim}`);
  await expect(page.getByTestId("audit-verdict")).toContainText(`entry ${victim}: bytes do not hash to the integrated leaf hash`);
  await page.screenshot({ path: path.join(RESULTS, "audit-explorer-tampered-1280.png"), fullPage: true });

  // The CLI agrees on a fresh export.
  const tampered = await download(page, "tampered.jsonl");
  const refused = await cli(["verify", tampered, "--key", logKey]);
  expect(refused.stdout).toContain(`first bad index ${victim}`);
  expect(refused.code).toBe(1);
});
