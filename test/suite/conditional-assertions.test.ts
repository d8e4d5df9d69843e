import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as ts from "typescript";

const TEST_ROOT = path.resolve(__dirname, "..");

function* testSources(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* testSources(full);
    else if (entry.name.endsWith(".ts")) yield full;
  }
}

/** Whether `node` holds a call of `expect` (expect(...), expect.any(...) as a value is no assertion). */
function assertsIn(node: ts.Node): boolean {
  if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "expect") return true;
  return ts.forEachChild(node, assertsIn) ?? false;
}

/** Where an assertion runs only on a condition: a branch of an `if` or `?:`, the right of `&&`/`||`/`??`, a `catch`. */
function conditionalAssertions(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => found.push(`${path.relative(TEST_ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
  const shortCircuits = [ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken];
  const visit = (node: ts.Node): void => {
    if (ts.isIfStatement(node) && (assertsIn(node.thenStatement) || (node.elseStatement && assertsIn(node.elseStatement)))) at(node, `if (${node.expression.getText()})`);
    if (ts.isConditionalExpression(node) && (assertsIn(node.whenTrue) || assertsIn(node.whenFalse))) at(node, `${node.condition.getText()} ? ... : ...`);
    if (ts.isBinaryExpression(node) && shortCircuits.includes(node.operatorToken.kind) && assertsIn(node.right)) at(node, node.getText());
    if (ts.isCatchClause(node) && assertsIn(node.block)) at(node, "catch { ... }");
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * An assertion behind a condition passes when the condition does not hold: a request that failed, a value that
 * was not there. Tests state what they expect for every case instead (a table of expected values, one assertion
 * that always runs).
 */
it("no test asserts only on a condition", () => {
  expect([...testSources(TEST_ROOT)].flatMap(conditionalAssertions)).toEqual([]);
});

it("finds an assertion behind a condition (the check itself can fail)", () => {
  const probe = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-conditional-")), "probe.test.ts");
  fs.writeFileSync(probe, "const r = await get();\nif (r) expect(r.status).toBe(405);\nr && expect(r).toBeDefined();\ntry { f(); } catch (e) { expect(e).toBeDefined(); }\n");
  try {
    expect(conditionalAssertions(probe).map((line) => line.replace(/^.*probe\.test\.ts:/, ""))).toEqual([
      "2: if (r)",
      "3: r && expect(r).toBeDefined()",
      "4: catch { ... }",
    ]);
  } finally {
    fs.rmSync(path.dirname(probe), { recursive: true, force: true });
  }
});
