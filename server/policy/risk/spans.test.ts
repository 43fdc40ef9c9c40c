import { beforeAll, describe, expect, it } from "vitest";
import { assessShellRiskSync, initShellRisk } from "./assess";
import type { RiskVerdict } from "./types";

beforeAll(async () => {
  await initShellRisk();
});

function reason(text: string, rule: string, verdict: RiskVerdict = assessShellRiskSync(text)) {
  const r = verdict.reasons.find((x) => x.rule === rule);
  if (!r) throw new Error(`no ${rule} in ${JSON.stringify(verdict.reasons.map((x) => x.rule))}`);
  return { ...r, text: text.slice(r.span.start, r.span.end) };
}

describe("reason spans point at the original text", () => {
  it("points a deletion at the command and the root target at its argument", () => {
    const text = "ls && rm -rf /";
    expect(reason(text, "command.deletes").text).toBe("rm -rf /");
    expect(reason(text, "command.destroys-system").text).toBe("/");
    expect(reason(text, "command.deletes").command).toBe("rm");
  });

  it("maps findings inside nested shell strings back to their exact position", () => {
    const text = `bash -c "bash -c 'rm -rf /'"`;
    const r = reason(text, "command.destroys-system");
    expect(r.text).toBe("/");
    expect(r.span.start).toBe(text.indexOf("/'"));
    expect(reason(text, "command.deletes").text).toBe("rm -rf /");
  });

  it("maps heredoc bodies fed to a shell onto the body lines with line and column", () => {
    const text = "echo start\ncat <<EOF | bash\n  rm -rf /\nEOF\n";
    const r = reason(text, "command.deletes");
    expect(r.text).toBe("rm -rf /");
    expect(r.span.line).toBe(3);
    expect(r.span.column).toBe(3);
  });

  it("maps eval'd and piped literals onto the literal", () => {
    expect(reason("eval 'rm -rf /tmp/x'", "command.deletes").text).toBe("rm -rf /tmp/x");
    expect(reason("echo 'rm x' | sh", "command.deletes").text).toBe("rm x");
    expect(reason("bash <<< 'rm x'", "command.deletes").text).toBe("rm x");
  });

  it("falls back to the enclosing argument when quote removal changed the inner text", () => {
    const text = `sh -c "rm -rf \\"/\\""`;
    const r = reason(text, "command.destroys-system");
    expect(r.text).toBe(`"rm -rf \\"/\\""`);
  });

  it("points at redirect targets and obfuscated names", () => {
    expect(reason("echo x > /etc/hosts", "redirect.write-sensitive").text).toBe("/etc/hosts");
    expect(reason("r''m -rf /", "name.obfuscated").text).toBe("r''m");
    expect(reason("echo hi\n  rm${IFS}x", "evasion.ifs").span).toMatchObject({ line: 2, column: 3 });
  });

  it("points parse errors at the broken text", () => {
    const r = reason(`ls; echo "oops`, "parse.error");
    expect(r.span.start).toBeGreaterThanOrEqual(4);
    expect(r.level).toBe("high");
  });

  it("counts offsets in UTF-16 code units so JavaScript slicing works with emoji and accents", () => {
    const text = "echo 'é😀'; rm x";
    expect(reason(text, "command.deletes").text).toBe("rm x");
  });

  it("points backslash-newline joined names at the whole joined word", () => {
    const text = "r\\\nm -rf /";
    expect(reason(text, "name.obfuscated").text).toBe("r\\\nm");
    expect(reason(text, "name.obfuscated").command).toBe("rm");
  });
});
