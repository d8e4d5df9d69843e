import * as fs from "node:fs";

/** One checked step of a run, as a CI report shows it. */
export interface StepResult {
  name: string;
  status: "passed" | "failed" | "skipped";
  seconds: number;
  /** Why it failed or was skipped. */
  message?: string;
}

/** Runs named steps in order, timing each and recording its outcome; a failed step does not stop the run. */
export class Steps {
  readonly results: StepResult[] = [];

  /** `explain`: what a failure's report adds to its message (the logs of the instances it concerns). */
  constructor(
    private readonly log: (line: string) => void,
    private readonly explain: (message: string) => string = () => "",
  ) {}

  /** Runs `step`; true when it passed. */
  async run(name: string, step: () => Promise<unknown>): Promise<boolean> {
    const started = Date.now();
    this.log(`--- ${name}`);
    try {
      await step();
      this.record({ name, status: "passed", seconds: (Date.now() - started) / 1000 });
      return true;
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      this.record({ name, status: "failed", seconds: (Date.now() - started) / 1000, message: message + this.explain(message) });
      return false;
    }
  }

  skip(name: string, reason: string): void {
    this.record({ name, status: "skipped", seconds: 0, message: reason });
  }

  get failed(): StepResult[] {
    return this.results.filter((r) => r.status === "failed");
  }

  private record(result: StepResult): void {
    this.results.push(result);
    const mark = { passed: "PASS", failed: "FAIL", skipped: "SKIP" }[result.status];
    this.log(`${mark} ${result.name} (${result.seconds.toFixed(1)} s)${result.message ? `\n     ${result.message.replace(/\n/g, "\n     ")}` : ""}`);
  }
}

/** The results as a JUnit XML report (one test suite, one test case per step), as CI systems read it. */
export function junitXml(suite: string, results: StepResult[]): string {
  const count = (status: StepResult["status"]) => results.filter((r) => r.status === status).length;
  const seconds = results.reduce((sum, r) => sum + r.seconds, 0);
  const cases = results.map((r) => {
    const open = `    <testcase classname="${xml(suite)}" name="${xml(r.name)}" time="${r.seconds.toFixed(3)}"`;
    if (r.status === "passed") return `${open}/>`;
    const inner = r.status === "failed"
      ? `<failure message="${xml(firstLine(r.message))}">${xml(r.message ?? "")}</failure>`
      : `<skipped message="${xml(r.message ?? "")}"/>`;
    return `${open}>\n      ${inner}\n    </testcase>`;
  });
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="gpu-rental" tests="${results.length}" failures="${count("failed")}" skipped="${count("skipped")}" time="${seconds.toFixed(3)}">`,
    `  <testsuite name="${xml(suite)}" tests="${results.length}" failures="${count("failed")}" skipped="${count("skipped")}" time="${seconds.toFixed(3)}">`,
    ...cases,
    `  </testsuite>`,
    `</testsuites>`,
    "",
  ].join("\n");
}

export function writeJunit(file: string, suite: string, results: StepResult[]): void {
  fs.writeFileSync(file, junitXml(suite, results));
}

function firstLine(text = ""): string {
  return text.split("\n")[0].slice(0, 300);
}

function xml(text: string): string {
  // Characters XML 1.0 cannot hold at all (terminal escape codes among them) are dropped.
  return text
    // eslint-disable-next-line no-control-regex -- the control characters XML allows are named to keep them
    .replace(/[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd]/gu, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}
