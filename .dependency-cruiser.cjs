// The layers of the product and its circles, which the lint checks (tools/layers.js, with dependency-cruiser):
// the SDK at the bottom; the emulator and the provider each on the SDK only; the CLI on top of the three; what builds
// and releases (release/), the build's tools, the tests and the benchmarks above them all, free to import anything.
// Type imports count as imports (tsPreCompilationDeps): a type in the wrong file is what a circle of them shows.

/** The folders of the product, bottom layer first; the ones above them (no rule of their own) after. */
const PRODUCT = ["sdk", "provider", "emulator", "cli"];
const ABOVE = ["release", "tools", "test", "bench", "examples"];

/** A rule that `layer`'s files import none of `others`. */
const onlyBelow = (layer, others, comment) => ({
  name: `${layer}-layer`,
  comment,
  severity: "error",
  from: { path: `^${layer}/` },
  to: { path: `^(${others.join("|")})/` },
});

module.exports = {
  forbidden: [
    onlyBelow("sdk", [...PRODUCT.filter((folder) => folder !== "sdk"), ...ABOVE], "the SDK is the bottom layer: it imports none of the others"),
    onlyBelow("emulator", ["provider", "cli", ...ABOVE], "the emulator stands on the SDK only"),
    onlyBelow("provider", ["emulator", "cli", ...ABOVE], "the provider stands on the SDK only: what runs in users' processes, not the CLI or the release"),
    onlyBelow("cli", ABOVE, "the CLI stands on the SDK, the provider and the emulator, not on what builds and releases"),
    {
      name: "no-circular",
      comment: "no import circle among the product's files, type imports included",
      severity: "error",
      from: { path: `^(${PRODUCT.join("|")})/` },
      to: { circular: true },
    },
  ],
  options: {
    // Type-only imports, which compile to nothing, are dependencies all the same.
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist)/" },
  },
};
