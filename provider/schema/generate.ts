import * as fs from "node:fs";
import * as path from "node:path";
import { RESOURCE_DESCRIPTIONS } from "../../sdk/resources/descriptions";
import { referenceMarkdown } from "./reference";
import { packageSchema } from "./schema";
import { typescriptDeclarations } from "./typescript";

/** The files made from the resource descriptions, by path from the package root. */
export function generatedFiles(): Record<string, string> {
  return {
    "provider/generated/resources.ts": typescriptDeclarations(RESOURCE_DESCRIPTIONS),
    "docs/reference.md": referenceMarkdown(RESOURCE_DESCRIPTIONS),
    // The package schema as the Pulumi registry reads it: what the plugin serves, less the version a release sets.
    "schema.json": `${JSON.stringify(packageSchema(undefined, RESOURCE_DESCRIPTIONS), null, 2)}\n`,
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
