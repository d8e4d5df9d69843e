import * as pulumi from "@pulumi/pulumi";
import { remote, types } from "@pulumi/command";
import { publicKeyOfPrivate } from "gpu-rental";
import { Instance } from "gpu-rental/provider";

// One instance, then post-boot steps over SSH: a script copied onto the instance and run there.
const config = new pulumi.Config();
const runName = config.get("runName") ?? "post-boot-demo";
// The private key the steps log in with, a secret in stack config; its public half is attached to the instance.
const privateKey = config.requireSecret("sshPrivateKey");

const trainer = new Instance("trainer", {
  gpuModel: config.get("gpuModel") ?? "RTX 4090",
  filters: { reliability: { gte: 0.95 } },
  maxPricePerHour: config.getNumber("maxPricePerHour"),
  image: config.get("image") ?? "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime",
  label: runName,
  runtype: "ssh_direct",
  disk: 32,
  // onstart runs at every boot, and editing it replaces the instance; the steps below do neither.
  onstart: "echo booted > booted.txt",
  // The key the steps log in with, attached once the instance exists: the account needs no key of its own.
  // (A public key is no secret: unsecret keeps it readable in the state and the diff.)
  sshKeys: pulumi.unsecret(privateKey.apply((key) => [publicKeyOfPrivate(key)])),
});

const required = (value: pulumi.Output<string | number | null>, name: string) =>
  value.apply((v) => {
    if (v === null || v === undefined) throw new Error(`the instance shows no ${name}: is its runtype one with SSH?`);
    return v;
  });

const connection: types.input.remote.ConnectionArgs = {
  host: required(trainer.sshHost, "sshHost") as pulumi.Output<string>,
  port: required(trainer.sshPort, "sshPort") as pulumi.Output<number>,
  user: "root",
  privateKey,
  // The SSH daemon can come up a little after the instance reports running: retry the connection.
  dialErrorLimit: 20,
  perDialTimeout: 15,
};

// Copied again, and run again, only when the instance or the script changes.
const script = new pulumi.asset.FileAsset("setup.sh");
const copy = new remote.CopyToRemote("setup-script", { connection, source: script, remotePath: "setup.sh", triggers: [trainer.instanceId] });

const setup = new remote.Command(
  "setup",
  {
    connection,
    // Variables in the command itself: SSH servers take only LANG and LC_* from a client (AcceptEnv).
    create: `RUN_NAME=${JSON.stringify(runName)} bash setup.sh`,
    triggers: [trainer.instanceId, copy.id],
  },
  { dependsOn: [copy] },
);

const check = new remote.Command("check", { connection, create: "cat data/READY booted.txt", triggers: [setup.id] }, { dependsOn: [setup] });

export const instanceId = trainer.instanceId;
export const sshCommand = pulumi.interpolate`ssh -p ${trainer.sshPort} root@${trainer.sshHost}`;
export const setupOutput = setup.stdout;
export const ready = check.stdout;
