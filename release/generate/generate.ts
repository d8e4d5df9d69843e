import * as fs from "node:fs";
import * as path from "node:path";
import { REGISTRY, Registry } from "../../provider/lifecycle/registry";
import { referenceMarkdown } from "./reference";
import { packageSchema } from "../../provider/schema/schema";
import { typescriptDeclarations } from "./typescript";

/** The files made from the descriptions of the registry's kinds and functions, by path from the package root. */
export function generatedFiles(registry: Registry = REGISTRY): Record<string, string> {
  return {
    "provider/generated/resources.ts": typescriptDeclarations(registry),
    "docs/reference.md": referenceMarkdown(registry),
    // The package schema as the Pulumi registry reads it: what the plugin serves, less the version a release sets.
    "schema.json": `${JSON.stringify(packageSchema(undefined, registry), null, 2)}\n`,
  };
}

/** `npm run gen:resources`: writes them. */
if (require.main === module) {
  const root = path.resolve(__dirname, "..", "..");
  for (const [file, text] of Object.entries(generatedFiles())) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
    console.log(`wrote ${file}`);
  }
}
