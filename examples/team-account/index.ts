import * as pulumi from "@pulumi/pulumi";
import { EnvVar, Instance, LocalVolume, Team, TeamMember, TeamRole, Webhook } from "gpu-rental/provider";

const config = new pulumi.Config();

// The account becomes the team's: its roles, members and keys are the team's.
const team = new Team("team", { name: config.get("teamName") ?? "ml-platform" });

// What the CI job that deploys the team's workloads needs, and nothing more: search offers (misc), rent, change
// and destroy instances and volumes (instance_read, instance_write). Not the account's secrets, billing or team.
const ciRole = "ci-deployer";
const ci = new TeamRole(ciRole, { name: ciRole, permissions: { api: { misc: {}, instance_read: {}, instance_write: {} } } }, { dependsOn: [team] });
// An invitation until they accept (the invitee needs an account of the service); refresh then shows `member`.
const member = new TeamMember("ci-bot", { email: config.require("ciEmail"), role: ciRole }, { dependsOn: [ci] });

// Every instance created from now on gets these in its environment; values are secrets, never in state in plaintext.
const hfToken = new EnvVar("hf-token", { name: "HF_TOKEN", value: config.requireSecret("hfToken") });
const project = new EnvVar("wandb-project", { name: "WANDB_PROJECT", value: config.get("wandbProject") ?? "ml-platform" });

// The team's receiver hears when an interruptible instance is outbid, when credit runs low, and instance events.
const hook = new Webhook("ops", {
  url: config.get("receiverUrl") ?? "https://hooks.example.com/gpu-rental",
  eventTypes: ["client:outbid", "client:low_credit"],
  name: "ops",
});

// A dataset cache on one machine's disk, and a worker on that machine that mounts it. The worker is made after
// the env vars, so its processes see them.
const cache = new LocalVolume("hf-cache", { q: { reliability2: { gte: 0.95 } }, size: 20, name: "hf_cache" });
const worker = new Instance(
  "worker",
  {
    offerId: cache.askContractId.apply((id) => id!),
    image: "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime",
    label: "team-worker",
    volumes: { "/data": cache.volumeId },
    onstart: 'echo "project $WANDB_PROJECT, token ${HF_TOKEN:+set}"',
  },
  { dependsOn: [cache, hfToken, project] },
);

export const teamAccountId = team.accountId;
export const ciRoleId = ci.roleId;
export const memberStatus = member.status;
export const webhookId = hook.webhookId;
// Shown once by `pulumi stack output webhookSecret --show-secrets`: the receiver checks each delivery with it.
export const webhookSecret = hook.secret;
export const volumeId = cache.volumeId;
export const workerId = worker.instanceId;
