/**
 * `relay report --html`'s page in a real browser: headless Chromium (Debian's `chromium` package)
 * loads the file from disk, and the DOM it built has the summary, the task, the findings and an
 * agent's markup as text — no script ran, nothing was added — and a screenshot of it is a real
 * image. Where Chromium is not installed the test shows as ignored, with a notice.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { renderHistoryHtml } from "../lib/cli/history_html.ts";
import { fixtureInput, textOf } from "./helpers/report_fixture.ts";
import { probeTool } from "./helpers/tools.ts";

/** The first of Debian's and Ubuntu's names for Chromium that answers --version. */
async function findChromium(): Promise<string | null> {
  for (const name of ["chromium", "chromium-browser"]) {
    if (await probeTool(name)) return name;
  }
  return null;
}

const chromium = await findChromium();

/** Runs headless Chromium on `args` with its own profile folder, killed after a minute. */
async function headless(tmp: string, args: string[]): Promise<{ code: number; stdout: string }> {
  const out = await new Deno.Command(chromium!, {
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-extensions",
      "--disable-dev-shm-usage",
      `--user-data-dir=${join(tmp, "profile")}`,
      ...args,
    ],
    env: { HOME: tmp },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    signal: AbortSignal.timeout(60_000),
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

if (chromium === null) {
  console.warn(
    "report_html_browser.test.ts: chromium is not installed, so the HTML report is not opened in a browser (apt-get install chromium)",
  );
  Deno.test({
    name:
      "relay report's HTML page in headless Chromium (skipped: chromium not installed — apt-get install chromium)",
    ignore: true,
    fn: () => {},
  });
} else {
  Deno.test("relay report's HTML page in headless Chromium: the rendered text, the agent's markup as text, a screenshot", async () => {
    const tmp = await Deno.makeTempDir({ prefix: "relay-report-browser-" });
    try {
      const page = join(tmp, "report.html");
      await Deno.writeTextFile(page, renderHistoryHtml(fixtureInput()));
      const url = `file://${page}`;

      const dumped = await headless(tmp, ["--dump-dom", url]);
      assert.equal(dumped.code, 0, "chromium --dump-dom failed");
      const dom = dumped.stdout;
      // What the browser built: the page's own elements only, its title untouched by any script.
      assert.match(dom, /<title>relay report — product<\/title>/);
      assert.doesNotMatch(dom, /<script|<img/i);
      assert.equal((dom.match(/<section class="task"/g) ?? []).length, 2);
      const text = textOf(dom);
      assert.match(text, /All 2 1 merged 3 3 3 19m 3 1h MERGE, WAIT/);
      assert.match(text, /1 Greet the user merged 2 2 2 14m 2 30m MERGE 51m/);
      assert.match(text, /Task 1 — Greet the user merged/);
      assert.match(text, /blocker the greeting ignores the user's name/);
      assert.match(text, /HOLD on task 3 since 2025-03-04 10:10:00: The agent wrote <script>/);
      assert.match(text, /person resumed by a person: .* held 30m/);
      assert.match(
        text,
        /major the page shows <script>document\.title="pwned"<\/script><img src=x onerror="alert\(1\)"> to visitors/,
      );

      const png = join(tmp, "report.png");
      const shot = await headless(tmp, [
        `--screenshot=${png}`,
        "--window-size=1280,1600",
        "--hide-scrollbars",
        url,
      ]);
      assert.equal(shot.code, 0, "chromium --screenshot failed");
      const bytes = await Deno.readFile(png);
      assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      assert.ok(bytes.length > 10_000, `the screenshot is ${bytes.length} bytes: a blank page?`);
      // IHDR: the image is the window's size.
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      assert.deepEqual([view.getUint32(16), view.getUint32(20)], [1280, 1600]);
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  });
}
