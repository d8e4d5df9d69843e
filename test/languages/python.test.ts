import * as fs from "node:fs";
import * as path from "node:path";
import { ed25519KeyPair } from "../../emulator";
import { DEFAULT_ORDER, GpuRentalClient, offerQuery } from "../../sdk";
import { AccountProgram, checkAccountAsCode } from "./account-as-code";
import { checkServerlessProgram } from "./serverless-checks";
import { ReleaseMirror, sharedRelease, VERSION } from "../helpers/release-mirror";
import { DocMachine, loginWith, pageScript, portIsFree, scriptOfPage, terminalsOf } from "./doc-program";

/** Serverless inference in Python (./serverless-checks.ts says what is checked): the example's model server. */
const SERVERLESS_PROGRAM = `import pulumi
import pulumi_gpu_rental as gpu_rental

config = pulumi.Config()
server = open("model_server.py").read()
model = gpu_rental.Template("model", name="python-echo-model", image="python", tag="3.11-slim", runtype="ssh",
                            env="-p 8000:8000 -e MODEL_VERSION=" + (config.get("model_version") or "1"),
                            onstart="cat > model_server.py <<'PY'\\n" + server + "PY\\nnohup python3 model_server.py > model_server.log 2>&1 &\\n")
endpoint = gpu_rental.Endpoint("echo", name="python-echo", min_load=0, cold_workers=0, max_workers=2, inactivity_timeout=300)
workers = gpu_rental.WorkerGroup("echo-workers", endpoint_id=endpoint.endpoint_id, template_hash=model.hash_id, gpu_count=1, gpu_ram=16,
                                 filters={"reliability2": {"gte": 0.9}})
pulumi.export("worker_group_id", workers.worker_group_id)
`;

/** The account as code in Python (./account-as-code.ts says what it declares and what is checked). */
const ACCOUNT_PROGRAM = `import pulumi
import pulumi_gpu_rental as gpu_rental

config = pulumi.Config()
team = gpu_rental.Team("team", name="research")
ci = gpu_rental.TeamRole("ci", name="ci", permissions={"api": {"misc": {}, "instance_read": {}, "instance_write": {}}},
                         opts=pulumi.ResourceOptions(depends_on=[team]))
bot = gpu_rental.TeamMember("bot", email="python-bot@gpu-rental.test", role="ci", opts=pulumi.ResourceOptions(depends_on=[ci]))
child = gpu_rental.Subaccount("child", email="python-child@example.com", username="python_child",
                              password=config.require_secret("child_password"))
hf = gpu_rental.EnvVar("hf", name="HF_TOKEN", value=config.require_secret("hf_token"))
project = gpu_rental.EnvVar("project", name="wandb_project", value="research")
ops = gpu_rental.Webhook("ops", url=config.require("receiver_url"), event_types=["client:outbid"], name="ops")
cache = gpu_rental.LocalVolume("cache", size=5, name="cache")
worker = gpu_rental.Instance(
    "worker",
    offer_id=cache.ask_contract_id,
    offer_type="bid",
    price=config.require_float("bid"),
    image="pytorch/pytorch",
    volumes={"/data": cache.volume_id},
    onstart='echo "$WANDB_PROJECT $HF_TOKEN" >> /data/seen',
    opts=pulumi.ResourceOptions(depends_on=[hf, project]),
)
pulumi.export("worker_id", worker.instance_id)
pulumi.export("webhook_secret", ops.secret)
# What the account did to rent the worker (asked once it exists), and what an RTX 4090 costs on the market now.
audit = gpu_rental.get_audit_logs_output(route=worker.instance_id.apply(lambda _: "/api/v0/asks/"))
pulumi.export("rented_by", audit.entries.apply(lambda entries: [entry.route for entry in entries]))
prices = gpu_rental.get_gpu_prices_output(gpu_name=worker.instance_id.apply(lambda _: "RTX 4090"))
pulumi.export("rtx4090", {"median": prices.price_median, "available": prices.available, "points": prices.history.apply(len)})
`;

/** The page's emulator, as it starts it, and its accounts' keys as the page gives them. */
const URL = "http://127.0.0.1:8766";
const KEYS = { mine: "local-dev-key-1", team: "team-dev-key-1" };
const client = (key: string) => new GpuRentalClient({ apiUrl: URL, apiKey: key, minRetryDelayMs: 5 });
// The user's key and a CI runner's, as the page's Deploy makes them (read once it has), and a key registered by hand.
const SSH = { mine: { private: "", public: "" }, ci: { private: "", public: "" }, laptop: ed25519KeyPair("me@other-laptop") };

/** What an account holds, as the service answers it. */
async function holdings(key: string) {
  const api = client(key);
  const [instances, volumes, templates, apiKeys, sshKeys] = await Promise.all([
    api.instances.list(), api.volumes.list("network_volume"), api.templates.search(), api.apiKeys.list(), api.sshKeys.list(),
  ]);
  return { instances, volumes, templates: templates.filter((t) => t.name === "py-worker"), apiKeys, sshKeys };
}

/**
 * docs/python.md followed as printed, the pip way, on a user's machine with no Node.js (no node, npm or npx on any
 * PATH) and the Pulumi CLI installed, behind a network whose proxy mirrors the release's GitHub downloads
 * (test/helpers/release-mirror.ts: the page names the real URLs): `pulumi install` of the wheel and pulumi, the
 * SDK's `gpu-rental` command on PATH by the virtual environment, which fetches the plugin's executable on its first
 * run; the emulator (that executable) in a terminal of its own with the second account the page names; `up` of an
 * SshKey, a Template, an Instance from it with a NetworkVolume attached and a CI key attached by `ssh_keys`, an
 * ApiKey, an Instance of the second account through an explicit provider, a GpuFleet of 4 and `get_offers`;
 * `gpu-rental test` of the program; `pulumi import` of an instance and an SSH key made by hand; `spend` and `sweep`.
 * Then, beyond the page: the trainer logged into over the emulator's SSH with both keys, `get_offers` against the
 * SDK's search, a refused input in Python's words, a resize of the fleet, a label changed and the CI key detached in
 * place (that key then refused), refresh, destroy, nothing left in either account, no key in plaintext, and the
 * account as code and serverless inference in Python. The page's npm way is python-npm.test.ts's.
 */
describe("a Python program, as docs/python.md sets it up with pip, on a machine with no Node.js", () => {
  let machine: DocMachine;
  let mirror: ReleaseMirror;
  let output: string;
  const dir = "gpu-python";

  beforeAll(async () => {
    expect(await portIsFree(8766)).toBe(true);
    mirror = await ReleaseMirror.start([await sharedRelease()]);
    machine = await DocMachine.start("python-docs", { node: false, pulumiInstalled: true, env: mirror.env });
    const page = pageScript("docs/python.md", ["The project", "Install with pip (no Node.js)", "Deploy", "Test it as CI does", "Adopt what was made elsewhere", "What it costs, and what is left behind"]);
    expect(terminalsOf(page)).toEqual(["gpu-rental emulator --port 8766 --api-key local-dev-key-1 --account-key team-dev-key-1"]);
    expect(scriptOfPage(page)).not.toMatch(/\b(npm|npx|node)\b/);
    // Made elsewhere (a script, the service's console): the instance the page's last section adopts.
    const madeByHand = async () => {
      const [offer] = await client(KEYS.mine).offers.search({ filters: { rentable: { eq: true } }, limit: 1 });
      await client(KEYS.mine).instances.create(offer.id, { image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "made-by-hand" });
      await client(KEYS.mine).sshKeys.add(SSH.laptop.public);
    };
    output = await machine.followPage(page, [/Control API/], madeByHand);
    const read = (file: string) => fs.readFileSync(path.join(machine.home, file), "utf8");
    SSH.mine = { private: read(".ssh/id_ed25519"), public: read(".ssh/id_ed25519.pub").trim() };
    SSH.ci = { private: read(`${dir}/ci_ed25519`), public: read(`${dir}/ci_ed25519.pub`).trim() };
  }, 900_000);
  afterAll(async () => {
    await machine?.run("pulumi destroy --yes && pulumi stack rm --yes --force", dir);
    await machine?.close();
    await mirror?.close();
  });

  it("deploys, tests as CI does, adopts, spends and sweeps, each command as printed, with the release's wheel and executable alone", async () => {
    expect(await machine.ok("command -v node npm npx || echo none")).toMatch(/^none$/m);
    expect(await machine.ok(". venv/bin/activate && command -v gpu-rental", dir)).toBe(`${path.join(machine.home, dir, "venv", "bin", "gpu-rental")}\n`);
    // The wheel from the release's URL, the executable fetched once, by the command's first run (the engine and
    // `gpu-rental test` found it in the Pulumi plugins afterwards).
    expect(mirror.fetched(`pulumi_gpu_rental-${VERSION}-py3-none-any.whl`)).toBeGreaterThanOrEqual(1);
    expect(mirror.fetched(`pulumi-resource-gpu-rental-v${VERSION}-linux-amd64.tar.gz`)).toBe(1);
    expect(output).not.toMatch(/SetuptoolsDeprecationWarning|setuptools.*warn/i);
    expect(output).toMatch(/\+ 9 created/);
    expect(output).toMatch(/gpu-rental test: (\d+) of \1 steps passed/);
    expect(output).toMatch(/PASS nothing left running/);
    expect(output).toMatch(/= 2 imported/);
    expect(output).toMatch(/11 unchanged/);
    const program = await machine.ok("cat __main__.py", dir);
    expect(program).toMatch(/adopted = gpu_rental\.Instance\("adopted"/);
    expect(program).toMatch(/laptop = gpu_rental\.SshKey\("laptop"/);
    // spend: the stack's instances, in its state; the one made by hand, not gpu-rental's. sweep: nothing left behind.
    expect(output).toMatch(/^\d+\s+trainer\s.*state of gpu-python\/dev\s/m);
    expect(output).toMatch(/made-by-hand.*not gpu-rental/);
    expect(output).toMatch(/^sweep: nothing found/m);
  });

  it("created each resource under its own account, the volume attached to the instance made from the template", async () => {
    const mine = await holdings(KEYS.mine);
    expect(mine.templates).toHaveLength(1);
    expect(mine.volumes).toHaveLength(1);
    expect(mine.instances.map((i) => i.label).sort()).toEqual(["made-by-hand", "pool-0", "pool-1", "pool-2", "pool-3", "trainer"]);
    expect(mine.apiKeys).toHaveLength(2); // the page's key and the program's
    // The program's login key and the one registered by hand, adopted; the CI key is the trainer's only.
    expect(mine.sshKeys.map((k) => k.public_key).sort()).toEqual([SSH.mine.public, SSH.laptop.public].sort());
    const trainer = mine.instances.find((i) => i.label === "trainer")! as Record<string, unknown>;
    expect(trainer.template_hash_id).toBe(mine.templates[0].hash_id);
    expect(trainer.volume_info).toEqual({ volume_id: mine.volumes[0].id, mount_path: "/datasets" });
    const theirs = await holdings(KEYS.team);
    expect(theirs.instances.map((i) => i.label)).toEqual(["team-trainer"]);
    expect(theirs.volumes).toEqual([]);
  });

  it("lets both the account's key and the key attached by ssh_keys log into the trainer, over the emulator's SSH", async () => {
    const ssh = (await machine.ok("pulumi stack output ssh", dir)).trim();
    for (const key of [SSH.mine, SSH.ci]) expect(await loginWith({}, ssh, key.private)).toMatch(/^logged in to \d+$/);
  });

  it("get_offers answers the offers the SDK's search of the same criteria answers, in its order", async () => {
    const offers = JSON.parse(await machine.ok("pulumi stack output h100_offers --json", dir)) as { id: number; per_hour: number }[];
    const searched = await client(KEYS.mine).offers.search(
      offerQuery({ filters: { gpu_name: { eq: "H100 SXM" }, reliability: { gte: 0.9 } }, order: DEFAULT_ORDER, candidatesPerSearch: 3 }),
    );
    expect(searched).toHaveLength(3);
    expect(offers).toEqual(searched.map((o) => ({ id: o.id, per_hour: o.dph_total })));
  });

  it("keeps both accounts' keys and the key the program made out of state and output", async () => {
    const made = await machine.secretOutput("ci_key", dir);
    expect(made).toMatch(/^\S{16,}$/);
    const state = machine.stateText(dir);
    expect(state).toMatch(/secure|ciphertext/);
    for (const secret of [KEYS.mine, KEYS.team, made]) {
      expect(state).not.toContain(secret);
      expect(machine.transcript.join("\n")).not.toContain(secret);
    }
  });

  it("names a refused input as Python spells it, with no traceback, as fast as a valid preview", async () => {
    // The faster of two runs each: one run's time on a busy machine says little.
    const timed = async (script: string) => {
      const runs = [];
      for (let i = 0; i < 2; i++) {
        const started = Date.now();
        runs.push({ ...(await machine.run(script, dir)), ms: Date.now() - started });
      }
      return runs.sort((a, b) => a.ms - b.ms)[0];
    };
    const valid = await timed("pulumi preview");
    expect(valid.code).toBe(0);
    const refused = await timed(
      "cp __main__.py good.py && echo 'gpu_rental.Instance(\"typo\", image=\"x\", runtype=\"ssh\", max_lifetime=\"soon\")' >> __main__.py && { pulumi preview || status=$?; }; mv good.py __main__.py; exit ${status:-0}",
    );
    expect(refused.code).not.toBe(0);
    expect(refused.output).toMatch(/resource 'typo' has a problem: max_lifetime: max_lifetime "soon" is not a duration/);
    expect(refused.output).not.toMatch(/maxLifetime|Traceback|KeyboardInterrupt/);
    console.log(`preview: valid ${valid.ms} ms, refused ${refused.ms} ms`);
    // The program ends as soon as the engine stops it, not after the 5 s the host waits before it kills a program
    // that does not end (what a refused preview cost before).
    expect(refused.ms).toBeLessThan(valid.ms + 2500);
  });

  it("resizes the fleet, changes the label and detaches the CI key in place, refreshes, then destroys everything", async () => {
    const pool = JSON.parse(await machine.ok("pulumi stack output pool_ids --json", dir)) as number[];
    expect(pool).toHaveLength(4);
    // The fleet resized from 4 to 2: updated in place, its last two members destroyed, the first two untouched.
    expect(await machine.ok("pulumi config set pool_size 2 && pulumi up --yes", dir)).toMatch(/~ 1 updated/);
    expect(JSON.parse(await machine.ok("pulumi stack output pool_ids --json", dir))).toEqual(pool.slice(0, 2));
    const trainerId = (await holdings(KEYS.mine)).instances.find((i) => i.label === "trainer")!.id;
    // A new label and the CI key detached: one update of the trainer in place; the CI key then logs in no more.
    const update = await machine.ok("pulumi config set label renamed && pulumi config rm trainer_ssh_keys && pulumi up --yes", dir);
    expect(update).toMatch(/~ 1 updated/);
    expect(update).not.toMatch(/replaced/);
    expect((await holdings(KEYS.mine)).instances.find((i) => i.id === trainerId)!.label).toBe("renamed");
    const ssh = (await machine.ok("pulumi stack output ssh", dir)).trim();
    await expect(loginWith({}, ssh, SSH.ci.private)).rejects.toThrow(/authentication methods failed/);
    expect(await loginWith({}, ssh, SSH.mine.private)).toBe(`logged in to ${trainerId}`);

    await machine.ok("pulumi refresh --yes", dir);
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/11 unchanged/);
    expect(await machine.ok("pulumi destroy --yes", dir)).toMatch(/- 11 deleted/);
    for (const key of [KEYS.mine, KEYS.team]) {
      const left = await holdings(key);
      expect([left.instances, left.volumes, left.templates, left.apiKeys.length, left.sshKeys]).toEqual([[], [], [], 1, []]);
    }
  }, 600_000);

  it("manages the account in Python: env vars the worker's onstart sees, a local volume kept across a stop, a team, a webhook whose receiver gets a signed outbid, a bid raised in place, imports, no secret in plaintext, destroy", async () => {
    const program: AccountProgram = {
      // The page's virtual environment: it has Pulumi and the SDK from the release's wheel.
      files: { "Pulumi.yaml": "name: python-account\nruntime:\n  name: python\n  options:\n    virtualenv: ../gpu-python/venv\n", "__main__.py": ACCOUNT_PROGRAM },
      names: { receiverUrl: "receiver_url", hfToken: "hf_token", childPassword: "child_password", bid: "bid", workerId: "worker_id", webhookSecret: "webhook_secret" },
      importedFile: "imported.py",
      // The printed code (its own imports included) after the program's.
      spliceImported: "cat imported.py >> __main__.py",
      // getAuditLogs and getGpuPrices as a Python program reads them: the worker's rental, the market's price now.
      afterUp: async (output, api) => {
        expect(await output("rented_by")).toEqual(["PUT /api/v0/asks/{offer_id}/"]);
        const now = (await api.gpuMetrics.current({ verified: "all" })).find((row) => row.gpu_name === "RTX 4090")!;
        expect(await output("rtx4090")).toEqual({ median: now.price_median, available: now.available, points: expect.any(Number) });
      },
    };
    await checkAccountAsCode(machine, URL, "python", program);
  }, 600_000);

  it("serves inference in Python: an endpoint and a worker group whose model server checks the route's signature, a burst to the cap, scale to zero and back, a rolling update with no request failed, destroy", async () => {
    const files = { "Pulumi.yaml": "name: python-serverless\nruntime:\n  name: python\n  options:\n    virtualenv: ../gpu-python/venv\n", "__main__.py": SERVERLESS_PROGRAM };
    await checkServerlessProgram(machine, URL, "python", files);
  }, 600_000);
});
