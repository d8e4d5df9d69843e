// The linter of `npm test`: ESLint's and typescript-eslint's recommended rules and, with the types, the promises
// nobody awaits (a rejection nobody hears of, an operation its caller takes for finished).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "**/node_modules/**", "tools/pulumi*/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { project: ["./tsconfig.test.json", "./tsconfig.examples.json"], tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", ignoreRestSiblings: true }],
      // Pulumi's properties and gRPC's messages are untyped where the shells meet them; strict tsc checks the rest.
      "@typescript-eslint/no-explicit-any": "off",
      // Modules loaded when they are needed, or from the program's folder (provider/sdk-provider.ts says why).
      "@typescript-eslint/no-require-imports": "off",
      // A resource class and the interface of its outputs merged into it: how Pulumi's own SDKs declare outputs.
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
    },
  },
  { files: ["provider/generated/**"], rules: { "@typescript-eslint/no-unsafe-declaration-merging": "off" } },
  {
    files: ["**/*.js", "**/*.cjs", "**/*.mjs"],
    rules: { "@typescript-eslint/no-require-imports": "off" },
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", module: "writable", exports: "writable", process: "readonly", console: "readonly", __dirname: "readonly", setTimeout: "readonly", clearTimeout: "readonly", Buffer: "readonly" },
    },
  },
  { files: ["**/*.mjs"], languageOptions: { sourceType: "module" } },
);
