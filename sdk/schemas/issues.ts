import { z } from "zod";

/** A validation failure in a sentence: each problem with the path of the field it is about. */
export function describeIssues(error: z.ZodError): string {
  return flatten(error.issues)
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "body"}: ${issue.message}`)
    .join("; ");
}

/**
 * A value that matches none of a union's shapes is told by the shape it came closest to, rather than by a bare
 * "Invalid input": the fewest problems, and among those the fewest about fields it does not have at all (when
 * the input was reported), so `{"disk_space": 50}` is told about `disk_space`, not about a missing `q`.
 */
function flatten(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_value" && "input" in issue) {
      // Parsed with `reportInput`: say what was sent, as well as what is allowed.
      const given = String(JSON.stringify(issue.input)).slice(0, 80);
      return [{ path, message: `${given} is not one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}` }];
    }
    if (issue.code !== "invalid_union" || !issue.errors.length) return [{ path, message: issue.message }];
    const missing = (branch: readonly z.core.$ZodIssue[]) => branch.filter((i) => "input" in i && i.input === undefined).length;
    const score = (branch: readonly z.core.$ZodIssue[]) => branch.length + missing(branch);
    const closest = issue.errors.reduce((best, branch) => (score(branch) < score(best) ? branch : best));
    return flatten(closest, path);
  });
}
