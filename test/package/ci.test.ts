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
import { runCutOff } from "../helpers/cut-off";

const WORKFLOW = path.join(REPO_ROOT, "examples", "ci", ".github", "workflows", "gpu-infrastructure.yml");

interface Step {
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, string>;
}
const workflow = parse(fs.readFileSync(WORKFLOW, "utf8")) as { jobs: Record<string, { if?: string; steps: Step[] }> };
/** The deploy job's step after its `pulumi up`: the sweep of what a failed or cancelled deploy left. */
const deploySweep = () => workflow.jobs.deploy.steps.find((s) => /gpu-rental sweep/.test(s.run ?? ""));

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
    // A deploy that failed or was cancelled is followed by a sweep of its stack's orphans.
    expect(deploySweep()).toMatchObject({ if: "failure() || cancelled()", run: expect.stringMatching(/^npx gpu-rental sweep --stack "\$PULUMI_STACK"$/) });
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

    it("its deploy job's clean-up step, after a deploy killed while renting, destroys exactly the stack's orphans; spend tells them apart", async () => {
      const before = emu.marketplace.instances.all().map((i) => i.id);
      const env = runnerEnv({ ...pulumiEnv(stack.ws), PULUMI_STACK: "prod", GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey });
      // Not made by gpu-rental: rented by hand, no creation token.
      const [offer] = await emu.client().offers.search({ limit: 1 });
      const byHand = (await emu.client().instances.create(offer.id, { image: "by-hand" })).new_contract;
      // Three replicas: the two new ones are rented and the deploy killed while they boot.
      await stack.ok("config", "set", "replicas", "3");
      emu.marketplace.lifecycle = { provisioningMs: 3_600_000, loadingMs: 0 };
      const cut = await runCutOff(stack, ["up", "--yes"], "SIGKILL", () => emu.marketplace.instances.all().length >= before.length + 3);
      expect(cut.signalled).toBe(true);
      emu.marketplace.lifecycle = { provisioningMs: 50, loadingMs: 100 };
      const orphans = emu.marketplace.instances.all().map((i) => i.id).filter((id) => !before.includes(id) && id !== byHand).sort();
      expect(orphans).toHaveLength(2);

      const spend = await runStep("npx gpu-rental spend --stack prod", program.dir, env);
      expect(spend.code).toBe(0);
      const owner = (id: number) => new RegExp(`^${id}\\s.*\\s${{ held: "state of gpu-rental-ci/prod", orphan: "orphan of gpu-rental-ci/prod", other: "not gpu-rental" }[id === byHand ? "other" : orphans.includes(id) ? "orphan" : "held"]}\\s`, "m");
      for (const id of [...before, ...orphans, byHand]) expect(spend.output).toMatch(owner(id));

      const sweep = await runStep(deploySweep()!.run!, program.dir, env);
      expect(sweep).toMatchObject({ code: 0, output: expect.stringMatching(/sweep: destroyed 2 object\(s\)/) });
      expect(emu.marketplace.instances.all().map((i) => i.id).sort()).toEqual([...before, byHand].sort());

      // The stack is as it was before the deploy: unlocked (the kill left it locked), two replicas fewer.
      await emu.client().instances.destroy(byHand);
      await stack.ok("cancel", "--yes");
      await stack.ok("config", "set", "replicas", "1");
    }, 300_000);

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
