import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { Clock } from "../../emulator";
import { pulumiEnv, runPulumi } from "../../cli/pulumi";
import { Accounts, PERMISSIONS } from "../../emulator/domain/accounts";
import { emulator, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT } from "../helpers/paths";
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
interface Job {
  if?: string;
  env?: Record<string, string>;
  steps: Step[];
}
const workflow = parse(fs.readFileSync(WORKFLOW, "utf8")) as { env?: Record<string, string>; jobs: Record<string, Job> };
/** The deploy job's step after its `pulumi up`: the sweep of what a failed or cancelled deploy left. */
const deploySweep = () => workflow.jobs.deploy.steps.find((s) => /gpu-rental sweep/.test(s.run ?? ""));
/** A job's `run:` steps, `npm ci` left out (the program is installed once). */
const commandsOf = (job: string) => workflow.jobs[job].steps.filter((s) => s.run && s.run !== "npm ci").map((s) => s.run!);

/**
 * A job's environment as GitHub Actions sets it: the workflow's `env` and the job's, each `${{ secrets.X }}` and
 * `${{ vars.X || 'default' }}` taken from those given (a secret not given is left out, as the backend's token here).
 */
function jobEnv(job: string, secrets: Record<string, string>, vars: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...workflow.env, ...workflow.jobs[job].env })) {
    const expression = /^\$\{\{\s*(secrets|vars)\.(\w+)(?:\s*\|\|\s*'([^']*)')?\s*\}\}$/.exec(value);
    if (!expression) throw new Error(`${job}: env ${name} is ${JSON.stringify(value)}, which this test cannot read`);
    const given = (expression[1] === "secrets" ? secrets : vars)[expression[2]] ?? expression[3];
    if (given !== undefined) env[name] = given;
  }
  return env;
}

/** The permission categories in backticks of the second column of a markdown table's row whose first column matches `row`. */
function permissionsIn(markdown: string, row: RegExp): string[] {
  const line = markdown.split("\n").find((l) => l.startsWith("|") && row.test(l.split("|")[1]));
  if (!line) throw new Error(`no table row ${row}`);
  return [...line.split("|")[2].matchAll(/`([a-z_]+)`/g)].map((m) => m[1]).filter((c) => (PERMISSIONS as readonly string[]).includes(c)).sort();
}
const CREDENTIALS = fs.readFileSync(path.join(REPO_ROOT, "docs", "installation-configuration.md"), "utf8");
const CI_README = fs.readFileSync(path.join(REPO_ROOT, "examples", "ci", "README.md"), "utf8");
/** The least permissions of each key, as docs/installation-configuration.md lists them (and examples/ci's README too). */
const LEAST = { deploy: permissionsIn(CREDENTIALS, /deploy/), preview: permissionsIn(CREDENTIALS, /preview/), sweep: permissionsIn(CREDENTIALS, /sweep/) };
const SECRET_OF = { deploy: "GPU_RENTAL_DEPLOY_KEY", preview: "GPU_RENTAL_PREVIEW_KEY", sweep: "GPU_RENTAL_SWEEP_KEY" } as const;
type Role = keyof typeof LEAST;

/** What each key was asked for by the emulator's permission check: the categories allowed and refused, and how many calls. */
interface KeyUse {
  allowed: Set<string>;
  refused: Set<string>;
  calls: number;
}

/** Watches the emulator's permission check (which still decides): what each key (by id) was asked for. */
function watchPermissions(accounts: Accounts): Map<number, KeyUse> {
  const uses = new Map<number, KeyUse>();
  const authorize = accounts.authorize.bind(accounts);
  accounts.authorize = (principal, permission, instanceKeyAllowed) => {
    const use = uses.get(principal.key.id) ?? { allowed: new Set(), refused: new Set(), calls: 0 };
    uses.set(principal.key.id, use);
    use.calls++;
    try {
      authorize(principal, permission, instanceKeyAllowed);
      use.allowed.add(permission);
    } catch (error) {
      use.refused.add(permission);
      throw error;
    }
  };
  return uses;
}

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
    // Every sweep of the schedule takes only the deployed stack's orphans (what carries its creation tokens and its
    // state does not hold), once old enough not to be a deploy's under way: never the whole account.
    expect(sweeps.length).toBeGreaterThan(0);
    for (const command of sweeps) expect(command).toMatch(/^npx gpu-rental sweep --stack "\$PULUMI_STACK" --older-than 6h( --dry-run)?$/);
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

  describe("its jobs against the service (an emulator), each with its own least-privilege key", () => {
    let emu: TestEmulator;
    let stack: TestStack;
    let uses: Map<number, KeyUse>;
    const keys = {} as Record<Role, { id: number; key: string }>;
    const callsOf = (role: Role) => uses.get(keys[role].id)?.calls ?? 0;

    /** The environment of `job`'s steps: the runner's, the stack's backend, and the workflow's `env` with the keys as its secrets. */
    const envOf = (job: string) =>
      runnerEnv({
        ...pulumiEnv(stack.ws),
        ...jobEnv(job, Object.fromEntries((Object.keys(SECRET_OF) as Role[]).map((role) => [SECRET_OF[role], keys[role].key])), { GPU_RENTAL_API_URL: emu.url }),
      });
    const runJobStep = (job: string, command: string) => runStep(command, program.dir, envOf(job));
    const drift = () => commandsOf("drift").find((c) => /refresh/.test(c))!;

    beforeAll(async () => {
      emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
      uses = watchPermissions(emu.marketplace.accounts);
      for (const role of Object.keys(LEAST) as Role[]) {
        const permissions = { api: Object.fromEntries(LEAST[role].map((category) => [category, {}])) };
        keys[role] = emu.marketplace.accounts.issueKey(emu.marketplace.seededUser.id, { name: `ci-${role}`, permissions });
      }
      // The stack's config holds no connection: the URL and each job's key come from the workflow's env.
      stack = new TestStack("prod", {}, program.dir);
      await stack.init({ replicas: "1" }, {});
      const [up] = commandsOf("deploy").filter((c) => /pulumi up/.test(c));
      const deployed = await runJobStep("deploy", up);
      if (deployed.code !== 0) throw new Error(`the deploy job's \`${up}\` exited ${deployed.code}:\n${deployed.output}`);
    }, 300_000);
    afterAll(async () => {
      // What the deploy job would destroy with: its URL and key.
      Object.assign(stack.ws.env!, { GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: keys.deploy.key });
      await stack.dispose();
      await emu.close();
    });

    it("lists every secret its jobs read, with the permissions of docs/installation-configuration.md; the preview key is the one examples/ci-api-key makes", () => {
      const header = fs.readFileSync(WORKFLOW, "utf8").split("\nname:")[0];
      const read = Object.values(workflow.jobs).flatMap((job) => Object.values(job.env ?? {}).flatMap((v) => [...v.matchAll(/secrets\.(\w+)/g)].map((m) => m[1])));
      for (const secret of new Set(read)) {
        expect(header).toContain(secret);
        expect(CI_README).toContain(`| \`${secret}\``);
      }
      for (const role of Object.keys(LEAST) as Role[]) expect(permissionsIn(CI_README, new RegExp(SECRET_OF[role]))).toEqual(LEAST[role]);
      const apiKeyExample = fs.readFileSync(path.join(REPO_ROOT, "examples", "ci-api-key", "index.ts"), "utf8");
      const permissions = apiKeyExample.split("\n").find((line) => /permissions: \{ api: /.test(line))!;
      expect([...permissions.matchAll(/(\w+): \{\}/g)].map((m) => m[1]).sort()).toEqual(LEAST.preview);
    });

    it("its preview job runs with the preview key, which the same job could not deploy with; a key in stack config is refused", async () => {
      await stack.ok("config", "set", "replicas", "2");
      const deployCalls = callsOf("deploy");
      const [previewCommand] = commandsOf("preview");
      const preview = await runJobStep("preview", previewCommand);
      expect(preview).toMatchObject({ code: 0, output: expect.stringMatching(/\+ 1 to create/) });
      expect(callsOf("preview")).toBeGreaterThan(0);

      // The same job's environment turned to deploying (a pull request that rewrote the step): the rental is refused.
      const before = emu.marketplace.instances.all().length;
      const up = await runJobStep("preview", 'pulumi up --stack "$PULUMI_STACK" --yes --skip-preview --non-interactive');
      expect(up.code).not.toBe(0);
      expect(up.output).toMatch(/lacks the instance_write permission/);
      expect(uses.get(keys.preview.id)!.refused).toEqual(new Set(["instance_write"]));
      expect(emu.marketplace.instances.all()).toHaveLength(before);

      // The deploying key put in stack config (it would win over the job's): the program refuses to run.
      const set = await runPulumi(stack.ws, ["config", "set", "--secret", "gpu-rental:apiKey", "--stack", "prod"], { input: keys.deploy.key });
      expect(set.code).toBe(0);
      const refused = await runJobStep("preview", previewCommand);
      expect(refused.code).not.toBe(0);
      expect(refused.output).toMatch(/never from stack config: run `pulumi config rm gpu-rental:apiKey`/);
      expect(callsOf("deploy")).toBe(deployCalls);
      await stack.ok("config", "rm", "gpu-rental:apiKey");
      await stack.ok("config", "set", "replicas", "1");
    }, 180_000);

    it("its drift job passes while the service matches the state", async () => {
      const { code, output } = await runJobStep("drift", drift());
      expect({ code, output }).toMatchObject({ code: 0 });
    }, 120_000);

    it("after a deploy killed while renting, its nightly spend job tells the orphans apart and sweeps exactly them once 6 hours old; the deploy's clean-up then finds nothing", async () => {
      const before = emu.marketplace.instances.all().map((i) => i.id);
      // Not made by gpu-rental: rented by hand, no creation token.
      const [offer] = await emu.client().offers.search({ limit: 1 });
      const byHand = (await emu.client().instances.create(offer.id, { image: "by-hand" })).new_contract;
      // Three replicas: the two new ones are rented and the deploy killed while they boot (a runner lost: no clean-up step).
      await stack.ok("config", "set", "replicas", "3");
      emu.marketplace.lifecycle = { provisioningMs: 3_600_000, loadingMs: 0 };
      const cut = await runCutOff(stack, ["up", "--yes"], "SIGKILL", () => emu.marketplace.instances.all().length >= before.length + 3, 10_000, envOf("deploy"));
      expect(cut.signalled).toBe(true);
      emu.marketplace.lifecycle = { provisioningMs: 50, loadingMs: 100 };
      const orphans = emu.marketplace.instances.all().map((i) => i.id).filter((id) => !before.includes(id) && id !== byHand).sort();
      expect(orphans).toHaveLength(2);

      // The next night: every step of the spend job, in order, as written.
      emu.marketplace.clock.advance(7 * 3_600_000);
      const outputs: string[] = [];
      for (const command of commandsOf("spend")) {
        const { code, output } = await runJobStep("spend", command);
        if (code !== 0) throw new Error(`\`${command}\` exited ${code}:\n${output}`);
        outputs.push(output);
      }
      const owner = (id: number) => new RegExp(`^${id}\\s.*\\s${{ held: "state of gpu-rental-ci/prod", orphan: "orphan of gpu-rental-ci/prod", other: "not gpu-rental" }[id === byHand ? "other" : orphans.includes(id) ? "orphan" : "held"]}\\s`, "m");
      for (const id of [...before, ...orphans, byHand]) expect(outputs[0]).toMatch(owner(id));
      const report = JSON.parse(fs.readFileSync(path.join(program.dir, "spend.json"), "utf8"));
      expect(report.instances.map((line: { id: number }) => line.id).sort()).toEqual([...before, ...orphans, byHand].sort());
      expect(outputs.at(-2)).toMatch(/sweep: would destroy 2 object\(s\)/);
      expect(outputs.at(-1)).toMatch(/sweep: destroyed 2 object\(s\)/);
      expect(emu.marketplace.instances.all().map((i) => i.id).sort()).toEqual([...before, byHand].sort());
      const cleanUp = await runJobStep("deploy", deploySweep()!.run!);
      expect(cleanUp).toMatchObject({ code: 0, output: expect.stringMatching(/sweep: nothing found/) });

      // The stack is as it was before the deploy: unlocked (the kill left it locked), two replicas fewer.
      await emu.client().instances.destroy(byHand);
      await stack.ok("cancel", "--yes");
      await stack.ok("config", "set", "replicas", "1");
    }, 300_000);

    it("its drift job fails, naming the resource, when an instance was changed outside Pulumi", async () => {
      const [instance] = emu.marketplace.instances.all();
      emu.marketplace.instances.update(instance, { label: "changed-by-hand" });
      const { code, output } = await runJobStep("drift", drift());
      expect(code).not.toBe(0);
      expect(output).toMatch(/inference-0/);
      expect(output).toMatch(/no changes were expected/);
      // A preview only: the state still holds what was deployed, for the deploy job to put back.
      const state = JSON.parse(await stack.ok("stack", "export")).deployment.resources.find((r: any) => r.type.endsWith(":Instance"));
      expect(state.outputs.label).toBe("inference-0");
    }, 120_000);

    it("each key used every permission it has, and no other (they are the least), and only the preview key was refused, once", () => {
      for (const role of Object.keys(LEAST) as Role[]) {
        const use = uses.get(keys[role].id)!;
        expect({ role, allowed: [...use.allowed].sort() }).toEqual({ role, allowed: LEAST[role] });
        expect({ role, refused: [...use.refused] }).toEqual({ role, refused: role === "preview" ? ["instance_write"] : [] });
      }
    });
  });
});
