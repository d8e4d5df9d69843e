import type { CreateInstanceRequest, Offer, Runtype, TemplateRuntype, VolumeType } from "../../sdk/schemas";

/*
 * The records of the emulator's state, one place for all: the domain's files (the rules over them) import their
 * types from here, not from each other, and the wire's views read them.
 */

/** An account (emulator/domain/accounts.ts). */
export interface UserRecord {
  id: number;
  email: string;
  username: string;
  fullName: string;
  /** The registered SSH public keys, one per line (see emulator/domain/ssh-keys.ts). */
  sshKey: string;
  /** The keys behind `sshKey`, with the ids `DELETE /api/v0/ssh/{id}/` takes. */
  sshKeys?: SshKeyRecord[];
  /** Keys attached to instances without being registered: their records (the ids `DELETE /api/v0/instances/{id}/ssh/{key_id}/` takes). */
  attachedSshKeys?: SshKeyRecord[];
  credit: number;
  emailVerified: boolean;
  tfaStatus: "enabled" | "disabled" | "legacy";
  /** 2FA (emulator/TFA.md): the phone number on file (E.164), used for SMS codes when no method names one. */
  phoneNumber?: string;
  /** 2FA: admins may ask for an admin session and send SMS codes without a verified email. */
  isAdmin?: boolean;
  /** 2FA: the user currently acts in a team context, where 2FA actions are forbidden. */
  teamContext?: boolean;
  /** 2FA: the account is flagged for SMS fraud; SMS is refused until support clears it. */
  smsFraud?: boolean;
  /** Epoch ms the account was opened (its opening credit is its first payment); absent in older saves. */
  createdAt?: number;
  /** `false`: the account does not have network volumes, which are not generally released (emulator/domain/volumes.ts). */
  networkVolumes?: boolean;
  /** The account's environment variables by key (emulator/domain/env-vars.ts): every instance created afterwards gets them. */
  envVars?: Record<string, string>;
  /** The team this account is (emulator/domain/teams.ts): its key made it a team account. */
  team?: TeamRecord;
  /** A subaccount's parent account (emulator/domain/subaccounts.ts). */
  parentId?: number;
  /** A subaccount made to host machines only. */
  hostOnly?: boolean;
  /** Where the service POSTs the account's events (emulator/domain/webhooks.ts). */
  webhooks?: WebhookRecord[];
  /** Its cloud connections (emulator/domain/cloud.ts). */
  cloudConnections?: CloudConnectionRecord[];
  /** What `PUT /api/v0/users/` set beyond the fields above (billing address, thresholds), by the service's names. */
  settings?: Record<string, string | number | boolean | null>;
  /** Where and when the account's keys were used (emulator/domain/audit.ts): the newest last, bounded. */
  ipAddresses?: { ip: string; firstSeen: number; lastSeen: number }[];
  /** Which events reach the account by which channel (emulator/domain/notifications.ts); absent: the defaults. */
  notificationPrefs?: Record<string, { email: boolean; webhooks: boolean }>;
}

/** A change the account made through the API, as `GET /api/v0/audit_logs/` lists it. */
export interface AuditEntry {
  id: number;
  ip: string;
  apiKeyId: number;
  /** Epoch ms. */
  at: number;
  /** `PUT /api/v0/instances/{id}/`: the method and the endpoint's path as declared. */
  route: string;
  /** The path's ids and the names of the body's fields (never their values: they may be secrets). */
  args: string;
}

/** `null` permissions: a full-access key, as the console creates by default. */
export type Permissions = { api: Record<string, Record<string, unknown>> } | null;

/** An API key of an account, or a 2FA login session (emulator/domain/accounts.ts). */
export interface ApiKeyRecord {
  id: number;
  /** SHA-256 of the key: the key itself is shown once, at creation, and never stored. */
  keyHash: string;
  /** The first characters of the key, so a user can tell keys apart in a listing. */
  prefix: string;
  userId: number;
  name: string;
  permissions: Permissions;
  /** Set for an instance API key: it may only start, stop or destroy this instance. */
  instanceId?: number;
  createdAt: number;
  revokedAt?: number;
  /** Epoch ms after which the key is refused (a 2FA login session); keys without it do not expire. */
  expiresAt?: number;
  /** A 2FA login session: a bearer like a key, but not one of the user's keys (not listed). */
  session?: boolean;
  /** A session's key presented at its login (absent for a browser login): revoking that key ends the session. */
  sourceKeyId?: number;
  /** The 2FA method a session's login verified (absent for email and backup codes): removing it ends the session. */
  tfaMethodId?: number;
  /** The key's text was chosen (`--api-key`), not drawn: once revoked it is kept, so it is never valid again. */
  chosen?: boolean;
  /** A team member's key on the team account: what it may do is its role's permissions, read at each call. */
  teamRole?: string;
  /** The member's own account. */
  memberId?: number;
}

/** A public key registered on an account (`POST /api/v0/ssh/`), or attached to an instance without being registered. */
export interface SshKeyRecord {
  id: number;
  /** One OpenSSH public key line: `<type> <base64> [comment]`. */
  key: string;
  createdAt: number;
}

/** A team: the account it is, its roles and its members (emulator/domain/teams.ts). */
export interface TeamRecord {
  name: string;
  createdAt: number;
  roles: TeamRoleRecord[];
  members: { userId: number; role: string; joinedAt: number }[];
  invitations: { email: string; role: string; sentAt: number }[];
  nextRoleId: number;
}

/** A role of a team: the permissions its members' keys have. */
export interface TeamRoleRecord {
  id: number;
  name: string;
  permissions: NonNullable<Permissions>;
}

/** A notification webhook of an account (emulator/domain/webhooks.ts). */
export interface WebhookRecord {
  /** The user's id times 1,000 plus the webhook's number: unique without a counter of its own. */
  id: number;
  name: string | null;
  url: string;
  eventTypes: string[];
  /** Signs every delivery; shown at creation and rotation only. */
  secret: string;
  /** Epoch ms. */
  createdAt: number;
  updatedAt: number;
}

/** A rented instance, with its lifecycle and billing (emulator/domain/instances.ts). */
export interface InstanceRecord {
  id: number;
  ownerId: number;
  offer: Offer;
  /**
   * What the instance runs with: the request over its template's values (the request alone without one). A
   * registry login keeps its user and registry only (`-u <user> <registry>`): the token is dropped at creation.
   */
  config: CreateInstanceRequest;
  /** The account's environment variables when the instance was created: its processes see them, under its own `env`. */
  accountEnv?: Record<string, string>;
  runtype: Runtype;
  isBid: boolean;
  /** The compute price ($/hour): on-demand, or the bid. Disk is charged on top, running or not. */
  pricePerHour: number;
  createdAt: number;
  /** When the current boot started; provisioning is skipped when an instance is restarted. */
  bootStartedAt: number;
  restarted: boolean;
  intended: "running" | "stopped";
  failure?: FailureStatus;
  /**
   * The second acceptance of its offer (Marketplace.doubleAcceptances): another acceptance holds the machine, so
   * this instance stays `loading` for ever, and its destruction gives the offer back to no one.
   */
  neverBoots?: true;
  statusMsg?: string;
  /** Stopped because its bid lost (below the offer's minimum, or outbid by another client): a higher bid resumes it. */
  stoppedByBid?: true;
  /** Its host's raises of its rate (emulator/domain/price-increases.ts). */
  priceIncreases?: PriceIncrease[];
  /** An accepted raise: the compute price from `from` (epoch ms, the contract's end then). */
  nextPrice?: { from: number; pricePerHour: number };
  /** A reboot or a recycle: its status until the boot it leads to (`bootStartedAt`) begins. */
  restarting?: "rebooting" | "recycling";
  /** The boot (`bootStartedAt`) that starts from a fresh container, its files gone: a recycle's. */
  freshBoot?: number;
  volume?: { id: number; mount_path: string };
  /** Every volume its container mounts, by path: `volume_info`'s and the `-v V.<id>:<path>` keys of `env`. */
  mounts?: VolumeMount[];
  label: string;
  ports: Record<string, { HostIp: string; HostPort: string }[]>;
  publicIp: string;
  directPortStart: number;
  directPortEnd: number;
  instanceKeyId?: number;
  /** Billing has been charged up to this time. */
  billedUntil: number;
  /**
   * Compute is charged from this time only (epoch ms), storage from creation: a serverless worker's, whose
   * creating state (provisioning) bills storage only, as the vendor documents.
   */
  computeFrom?: number;
  /** Public keys that may log in over SSH: the account's when the instance was created, and any attached since. */
  sshKeys?: string[];
  /** Where the emulator serves this instance's SSH (emulator/ssh/): set while SSH is on, not kept across restarts. */
  sshEndpoint?: { host: string; port: number };
  /**
   * The loopback port each container port is really published on while its machine is up (`"8000/tcp"` → 41234,
   * emulator/sandbox/network.ts): shown in its `ports` in place of the record's. Not kept across restarts.
   */
  publishedPorts?: Record<string, number>;
  /**
   * The boot (its `bootStartedAt`) whose emulated machine is still starting (onstart, the SSH endpoint): until it
   * is up the instance reports `loading`. Not kept across restarts.
   */
  bootPending?: number;
  /** Credit prepaid into the instance (emulator/domain/deposits.ts): its charges draw on it first. */
  deposit?: DepositRecord;
}

/** An instance's prepaid deposit: what is left of it, and the discount its charges get while they draw on it. */
export interface DepositRecord {
  /** What is left ($): refunded to the owner's credit when the instance is destroyed. */
  remaining: number;
  /** Everything prepaid into it ($). */
  paid: number;
  /** The share taken off the charges drawn on it (0 to 0.4). */
  discountRate: number;
  /** The months of the instance's rate the prepayments cover, when last prepaid. */
  months: number;
  /** What the discount has saved so far ($). */
  discounted: number;
}

/** A cloud connection of an account (emulator/domain/cloud.ts): a folder of this computer stands for its bucket. */
export interface CloudConnectionRecord {
  id: number;
  name: string;
  /** The kind of storage it names, as the service's connections do (`s3`, `drive`, `hf`, ...). */
  cloudType: string;
  /** The folder standing for its bucket. */
  folder: string;
}

/** A failure status an instance is forced into (an emulator control): it never reaches `running` again. */
export type FailureStatus = "exited" | "unknown" | "offline";

/** A volume a container mounts, and where. */
export interface VolumeMount {
  volumeId: number;
  path: string;
}

/** A host's raise of a running contract's rate, kept on its instance (emulator/domain/price-increases.ts). */
export interface PriceIncrease {
  /** The contract's id times 1,000 plus the raise's number: unique without a counter of its own. */
  id: number;
  state: "pending" | "accepted" | "rejected";
  /** Epoch ms. */
  createdAt: number;
  oldPricePerHour: number;
  newPricePerHour: number;
  /** Epoch seconds: the contract's end now, and the new ask's end (30 days later). */
  contractEnd: number | null;
  askEnd: number | null;
}

/** A network or local volume (emulator/domain/volumes.ts). */
export interface VolumeRecord {
  id: number;
  ownerId: number;
  type: VolumeType;
  name: string;
  size: number;
  /** The volume offer it was created from: a network volume offer, or for a local volume the machine's offer. */
  askId: number;
  machineId: number | null;
  geolocation: string | null;
  storageCost: number;
  createdAt: number;
  /** Instances it is attached to (a local volume: at most one). */
  instances: number[];
  /** Its storage has been charged up to this time (ms); absent in state saved before volumes billed: `createdAt`. */
  billedUntil?: number;
}

/** A template (emulator/domain/templates.ts). */
export interface TemplateRecord {
  id: number;
  hash_id: string;
  creator_id: number;
  /** Epoch seconds, as the wire reports dates. */
  created_at: number;
  count_created: number;
  recent_create_date: number | null;
  recommended: boolean;
  content: TemplateContent;
}

/** Every content field of a template, defaults applied: what its `hash_id` is derived from (but the password). */
export interface TemplateContent {
  name: string;
  image: string;
  tag: string;
  desc: string;
  readme: string;
  env: string;
  onstart: string;
  runtype: TemplateRuntype;
  args_str: string;
  ssh_direct: boolean;
  use_ssh: boolean;
  jup_direct: boolean;
  jupyter_dir: string | null;
  use_jupyter_lab: boolean;
  docker_login_repo: string;
  docker_login_user: string;
  docker_login_pass: string;
  href: string;
  repo: string;
  extra_filters: Record<string, unknown>;
  recommended_disk_space: number;
  private: boolean;
  volume_info: Record<string, unknown> | null;
}

/** A serverless endpoint (emulator/domain/serverless.ts, emulator/SERVERLESS.md). */
export interface EndpointRecord {
  id: number;
  ownerId: number;
  name: string;
  minLoad: number;
  minColdLoad: number;
  targetUtil: number;
  coldMult: number;
  coldWorkers: number;
  maxWorkers: number;
  maxQueueTime: number;
  targetQueueTime: number;
  /** Seconds; null: the emulator's default gate (DEFAULT_INACTIVITY_S). */
  inactivityTimeout: number | null;
  state: EndpointState;
  /** The endpoint's own key: `/route/` takes it (or the owner's). */
  apiKey: string;
  createdAt: number;
  /** The last request routed (or asked for): the inactivity timeout counts from it. */
  lastRequestAt: number;
  /** Numbers each routed request, in order. */
  reqnum: number;
}

/** An endpoint's state: `active` (managed), `suspended` (left as it is), `stopped` (every worker inactive). */
export type EndpointState = "active" | "suspended" | "stopped";

/** A worker group of an endpoint. */
export interface WorkerGroupRecord {
  id: number;
  ownerId: number;
  endpointId: number;
  templateHash: string | null;
  templateId: number | null;
  searchParams: string;
  launchArgs: string | null;
  gpuRam: number;
  testWorkers: number;
  coldWorkers: number | null;
  /** Taken and shown; not used at the group level (the vendor's docs). */
  extra: { min_load?: number; target_util?: number; cold_mult?: number; max_workers?: number };
  createdAt: number;
  /** Bumped when what a worker runs changes (the template): workers of an older version are rolled. */
  version: number;
  /** The deployment whose workers it rents (from the deployment, not a template). */
  deploymentId?: number;
}

/** A worker: an instance the autoscaler rented for a group. */
export interface WorkerRecord {
  instanceId: number;
  groupId: number;
  endpointId: number;
  /** The group's `version` it was made for: older ones are replaced by a rolling update. */
  version: number;
  /** When its model server first answered (or reported itself loaded): from then on it is ready. */
  loadedAt?: number;
  /** Retired by a rolling update or a scale-down: no new request goes to it; destroyed once it is idle. */
  retiring?: true;
  /** The worker of an older version this one replaces in a rolling update (retired once this one is ready). */
  replaces?: number;
  /** What the worker last reported (`/worker_status/`) or the control API set. */
  reportedLoad?: number;
  error?: string;
}

/** A deployment (emulator/DEPLOYMENTS.md): a named, tagged bundle of code on an image, served by its own endpoint and group. */
export interface DeploymentRecord {
  id: number;
  ownerId: number;
  name: string;
  tag: string;
  image: string;
  /** Docker flags of its workers, as the client sent them. */
  env: string;
  searchParams: string;
  /** Disk of each worker, GB. */
  storage: number;
  /** Seconds it lives without a heartbeat; null: for ever. */
  ttl: number | null;
  /** The last heartbeat (or put), emulator ms. */
  lastHeartbeatAt: number;
  /** Registry login of its image (`-u user -p token repo`), never shown back. */
  imageLogin: string | null;
  endpointId: number;
  groupId: number;
  /** The version last put (its code the newest), and the last one whose workers served. */
  currentVersionId: number;
  lastHealthyVersionId: number | null;
  /** Which deployment version each version of its group runs (the group's `version` → a version id). */
  groupVersions: Record<number, number>;
  createdAt: number;
  updatedAt: number;
}

/** A version of a deployment's code: its bundle, and whether workers served it. */
export interface DeploymentVersionRecord {
  id: number;
  deploymentId: number;
  fileHash: string;
  fileSize: number;
  label: string | null;
  status: "pending_upload" | "deploying" | "healthy" | "failed" | "evicted";
  /** Why its workers failed. */
  error: string | null;
  /** The secret of its upload form, until the bundle arrives. */
  uploadToken: string | null;
  /** The secret of its download URL. */
  downloadToken: string;
  /** The bundle, base64 (dropped when evicted). */
  bundle: string | null;
  createdAt: number;
}
