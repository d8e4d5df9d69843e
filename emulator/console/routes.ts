import * as fs from "node:fs";
import * as path from "node:path";
import { FastifyInstance } from "fastify";
import { z } from "zod";
import { Marketplace } from "../domain/marketplace";
import { Faults } from "../control/faults";
import { parse } from "../http/routes";
import { PACKAGE_ROOT } from "../../sdk/package-root";
import { CONSOLE_LIBRARIES, CONSOLE_SCRIPT, dependencyFile } from "./assets";
import { CONSOLE_CSS, CONSOLE_HTML } from "./page";
import { consoleView, MarketCache } from "./view";

/**
 * The console: a page at `/console` that shows the whole emulator (docs/emulator.md, "The console"). The page and its
 * assets are static and hold nothing of the emulator; what it shows comes from `GET /_emulator/console`, a control
 * call like the others, so the control API's guard (Host, Origin, token: docs/control-api.md) holds for it, and
 * its controls are the control API's own calls. Served only with the control API (`--no-control` turns both off).
 */
export function registerConsole(app: FastifyInstance, market: Marketplace, faults: Faults, options: { controlToken?: string }): void {
  const cache = new MarketCache();
  const assets = consoleAssets();

  app.get("/console", async (_request, reply) => pageReply(reply, "text/html; charset=utf-8", CONSOLE_HTML));
  app.get("/console/assets/:name", async (request, reply) => {
    const asset = assets.get((request.params as { name: string }).name);
    if (!asset) return reply.status(404).type("application/json").send({ success: false, error: "not_found", msg: "No such asset." });
    return pageReply(reply, asset.type, asset.text());
  });

  app.get("/_emulator/console", async (request) => {
    const { since } = parse(Since, request.query, "query");
    return consoleView(market, faults, options.controlToken !== undefined, cache, since);
  });
}

/** `?since=<emulated seconds>`: the page's last reading, so only the charges made since are sent again. */
const Since = z.object({ since: z.coerce.number().min(0).optional() }).strict();

/**
 * The page's own answers: no other site may frame it (its controls must not be clicked through a frame) nor may it
 * load anything but this emulator's own files; they are static, so a browser may keep them for a minute.
 */
function pageReply(reply: import("fastify").FastifyReply, type: string, body: string) {
  return reply
    .type(type)
    .header("content-security-policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
    .header("x-frame-options", "DENY")
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("cache-control", "max-age=60")
    .send(body);
}

interface Asset {
  type: string;
  text(): string;
}

/** The page's scripts and styles: the libraries' files, its own styles and script; each read once, when first asked for. */
function consoleAssets(): Map<string, Asset> {
  const libraries = Object.entries(CONSOLE_LIBRARIES).map(([name, { dependency, file, type }]): [string, Asset] => [name, once(type, () => fs.readFileSync(dependencyFile(dependency, file), "utf8"))]);
  return new Map<string, Asset>([
    ...libraries,
    ["console.css", once("text/css; charset=utf-8", () => CONSOLE_CSS)],
    ["console.js", once("text/javascript; charset=utf-8", () => asBrowserScript(fs.readFileSync(builtScript(), "utf8")))],
  ]);
}

function once(type: string, read: () => string): Asset {
  let text: string | undefined;
  return { type, text: () => (text ??= read()) };
}

/**
 * tsc builds every file of the package as CommonJS (module node16), which marks it with `exports.__esModule`: the
 * page's script gets an `exports` of its own to mark, and no source map (its map is not served).
 */
function asBrowserScript(built: string): string {
  return `(function (exports) {\n${built.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n")}})({});\n`;
}

/** The page's script in the package's dist/ (from the sources too: tests run them beside a build). */
function builtScript(): string {
  const file = path.join(PACKAGE_ROOT, CONSOLE_SCRIPT);
  if (!fs.existsSync(file)) throw new Error(`The console's script is not built (${file}): run npm run build.`);
  return file;
}
