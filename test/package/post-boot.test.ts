import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { ed25519KeyPair } from "../../emulator";
import { REPO_ROOT } from "../helpers/paths";

/**
 * examples/post-boot's wiring under Pulumi's mocks (the `command` plugin it needs is served by no registry here:
 * examples.test.ts deploys it only where the machine has one): the program runs as written, and each
 * `remote.*` step gets the rented instance's SSH host and port, root, and the private key from secret config.
 */
/** How Pulumi marks a secret value in resource inputs: { [specialSigKey]: specialSecretSig, value }. */
const { specialSigKey: SECRET_SIG, specialSecretSig: SECRET } = require("@pulumi/pulumi/runtime/rpc");

it("examples/post-boot connects its remote steps to the instance it rents, with the key from secret config, its public half attached to the instance", async () => {
  const registered: { type: string; name: string; inputs: any }[] = [];
  const instance = { instanceId: 4242, sshHost: "203.0.113.7", sshPort: 40022 };
  await pulumi.runtime.setMocks(
    {
      newResource: ({ type, name, inputs }) => {
        registered.push({ type, name, inputs });
        // The instance as the service shows it once running; every other resource echoes its inputs.
        const state = name === "trainer" ? { ...inputs, ...instance } : inputs;
        return { id: `${name}-id`, state: type === "command:remote:Command" ? { ...state, stdout: `${name} done` } : state };
      },
      call: () => ({}),
    },
    "gpu-rental-post-boot",
    "test",
    false,
  );
  const key = ed25519KeyPair("post-boot");
  pulumi.runtime.setAllConfig({ "gpu-rental-post-boot:sshPrivateKey": key.private }, ["gpu-rental-post-boot:sshPrivateKey"]);

  const program = require(path.join(REPO_ROOT, "examples", "post-boot", "index.ts"));
  const ready = await new Promise((resolve) => program.ready.apply(resolve));
  expect(ready).toBe("check done");

  const steps = registered.filter((r) => r.type.startsWith("command:remote:"));
  expect(steps.map((r) => `${r.type} ${r.name}`).sort()).toEqual(["command:remote:Command check", "command:remote:Command setup", "command:remote:CopyToRemote setup-script"]);
  for (const step of steps) {
    // A secret as a whole (the key in it is one), as the engine would store it: Pulumi's secret signature.
    expect(step.inputs.connection[SECRET_SIG]).toBe(SECRET);
    expect(step.inputs.connection.value).toMatchObject({ host: instance.sshHost, port: instance.sshPort, user: "root", privateKey: key.private });
  }
  const setup = steps.find((r) => r.name === "setup")!;
  expect(setup.inputs.create).toBe('RUN_NAME="post-boot-demo" bash setup.sh');
  // Run again when the instance is replaced: the steps are triggered by its id.
  expect(setup.inputs.triggers).toContain(instance.instanceId);
  const trainer = registered.find((r) => r.name === "trainer")!;
  expect(trainer.inputs).toMatchObject({ label: "post-boot-demo", runtype: "ssh_direct", gpuModel: "RTX 4090" });
  // The public half of the secret key, attached to the instance, and not a secret itself.
  expect(trainer.inputs.sshKeys).toEqual([key.public]);
});
