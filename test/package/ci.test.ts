import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { Clock } from "../../emulator";
import { pulumiEnv } from "../../cli/pulumi";
import { emulator, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT } from "../helpers/provider-host";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { runnerEnv, runStep } from "./runner";

const WORKFLOW = path.join(REPO_ROOT, "examples", "ci", ".github", "workflows", "gpu-infrastructure.yml");

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, string>;
}
const workflow = parse(fs.readFileSync(WORKFLOW, "utf8")) as { jobs: Record<string, { if?: string; steps: Step[] }> };

describe("the GitHub Actions workflow of examples/ci", () => {
  let program: UserProgram;

  beforeAll(async () => {
    // The repository a user made from the example, with the package installed (and a lock file committed).
    program = await UserProgram.fromExample("ci");
  }, 300_000);
  afterAll(() => program.remove());

  it("runs on pull requests, main and a schedule, with a job for each", () => {
    expect(Object.keys(workflow.jobs).sort()).toEqual(["deploy", "drift", "emulator", "preview", "spend"]);
    expect(workflow.jobs.emulator.if).toMatch(/pull_request/);
    expect(workflow.jobs.preview.if).toMatch(/pull_request/);
    expect(workflow.jobs.deploy.if).toMatch(/refs\/heads\/main/);
    expect(workflow.jobs.drift.if).toMatch(/schedule/);
    expect(workflow.jobs.spend.if).toMatch(/schedule/);
    const sweeps = workflow.jobs.spend.steps.filter((s) => /gpu-rental sweep/.test(s.run ?? "")).map((s) => s.run!);
    // Every sweep of the schedule is bounded by a token prefix and an age or idleness: never the whole account.
    expect(sweeps.length).toBeGreaterThan(0);
    for (const command of sweeps) expect(command).toMatch(/--token-prefix .*--(older-than|idle) /);
  });

  it("its emulator job's commands, run exactly as written, test the program and leave a JUnit report", async () => {
    const steps = workflow.jobs.emulator.steps;
    const commands = steps.filter((s) => s.run).map((s) => s.run!);
    expect(commands).toEqual(["npm ci", expect.stringMatching(/^npx gpu-rental test /)]);
    for (const command of commands) {
      const { code, output } = await runStep(command, program.dir, runnerEnv());
      if (code !== 0) throw new Error(`\`${command}\` exited ${code}:\n${output}`);
    }
    const report = steps.find((s) => s.uses?.startsWith("actions/upload-artifact"))!.with!.path;
    const xml = fs.readFileSync(path.join(program.dir, report), "utf8");
    expect(xml).toMatch(/<testsuite [^>]*tests="\d+" failures="0"/);
    expect(xml).toMatch(/name="second up shows no changes"/);
  }, 300_000);

  describe("its nightly drift job's command", () => {
    let emu: TestEmulator;
    let stack: TestStack;

    beforeAll(async () => {
      emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
      stack = new TestStack("prod", {}, program.dir);
      await stack.init({ "gpu-rental:apiUrl": emu.url, replicas: "1" }, { "gpu-rental:apiKey": emu.apiKey });
      await stack.ok("up", "--yes");
    }, 300_000);
    afterAll(async () => {
      await stack.dispose();
      await emu.close();
    });

    const drift = () => workflow.jobs.drift.steps.filter((s) => s.run && /refresh/.test(s.run)).map((s) => s.run!)[0];
    const runDrift = () => runStep(drift(), program.dir, runnerEnv({ ...pulumiEnv(stack.ws), PULUMI_STACK: "prod" }));

    it("passes while the service matches the state", async () => {
      const { code, output } = await runDrift();
      expect({ code, output }).toMatchObject({ code: 0 });
    }, 120_000);

    it("fails, naming the resource, when an instance was changed outside Pulumi", async () => {
      const [instance] = emu.marketplace.instances.all();
      emu.marketplace.instances.update(instance, { label: "changed-by-hand" });
      const { code, output } = await runDrift();
      expect(code).not.toBe(0);
      expect(output).toMatch(/inference-0/);
      expect(output).toMatch(/no changes were expected/);
      // A preview only: the state still holds what was deployed, for the deploy job to put back.
      const state = JSON.parse(await stack.ok("stack", "export")).deployment.resources.find((r: any) => r.type.endsWith(":Instance"));
      expect(state.outputs.label).toBe("inference-0");
    }, 120_000);
  });
});
