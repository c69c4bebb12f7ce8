// build.mjs writes ../echarts.min.js from entry.js and the brotli copies of
// the vendored scripts under ../../br/vendor/ that the server sends to
// browsers accepting br. esbuild bundles echarts' own ES modules into one
// script that sets the global `echarts`; terser minifies it (about 5 %
// smaller than esbuild's minifier once compressed). Run from this
// directory: npm ci && npm run build
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { brotliCompressSync, constants } from "node:zlib";
import { build } from "esbuild";
import { minify } from "terser";

const bundle = await build({
  entryPoints: ["entry.js"],
  bundle: true,
  format: "iife",
  globalName: "echarts",
  // echarts guards its development warnings with process.env.NODE_ENV.
  define: { "process.env.NODE_ENV": '"production"' },
  target: "es2018",
  legalComments: "none",
  write: false,
});
const min = await minify(bundle.outputFiles[0].text, {
  ecma: 2018,
  compress: { passes: 3 },
  mangle: true,
  format: {
    preamble:
      "/*! Apache ECharts 6.1.0 (line and scatter charts, grid, legend, tooltip, aria, canvas renderer) | Apache-2.0 | " +
      "Copyright 2017-2026 The Apache Software Foundation | built by ratelab static/vendor/echarts-build */",
  },
});
writeFileSync("../echarts.min.js", min.code + "\n");
console.log(`echarts.min.js ${Buffer.byteLength(min.code) + 1} bytes`);

// A copy is named after the first 12 hex digits of its source's sha256
// (the version static.Path puts into the URL), so the server never sends a
// copy of an older file: static.Brotli finds no copy and gzip is used.
rmSync("../../br/vendor", { recursive: true, force: true });
mkdirSync("../../br/vendor", { recursive: true });
for (const f of readdirSync("..").filter((f) => f.endsWith(".js")).sort()) {
  const raw = readFileSync(`../${f}`);
  const v = createHash("sha256").update(raw).digest("hex").slice(0, 12);
  const br = brotliCompressSync(raw, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
      [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS,
      [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
    },
  });
  writeFileSync(`../../br/vendor/${f}.${v}.br`, br);
  console.log(`br/vendor/${f}.${v}.br ${br.length} bytes (from ${raw.length})`);
}
