import { startEmulator, EmulatorOptions, RunningEmulator, SSH_HOST } from "../emulator";
import { keyFromFile, registerOnSeededAccount, sshCommandLine } from "./ssh-key";

export interface EmulatorCommandOptions extends EmulatorOptions {
  /** Keys of further accounts, one account each (made unless a kept state knows the key already). */
  accountKeys?: string[];
  /** A private key whose public half (FILE.pub) is registered on the seeded account; each instance's ssh line uses it. */
  sshKeyFile?: string;
}

/**
 * `gpu-rental emulator`: runs the emulator in the foreground until interrupted, or until the process that started
 * it is gone. `npx gpu-rental emulator &` runs it under npm and a shell, and `kill %1` stops npm alone: without
 * this the emulator would live on unseen, holding its port.
 */
export async function runEmulatorCommand(options: EmulatorCommandOptions): Promise<void> {
  const key = options.sshKeyFile === undefined ? undefined : keyFromFile(options.sshKeyFile);
  // Instances kept in a data folder may boot while the emulator starts: their lines wait until it has.
  let started: RunningEmulator | undefined;
  const booted: { id: number; host: string; port: number }[] = [];
  const showLogin = (instance: { id: number; host: string; port: number }) =>
    console.log("Instance %d is up; log in with: %s", instance.id, sshCommandLine(started!, key ?? {}, instance.host, instance.port));
  const onMachineUp = (instance: { id: number; host: string; port: number }) => (started ? showLogin(instance) : booted.push(instance));
  const emulator = (started = await startEmulator({ ...options, ssh: options.ssh && { onMachineUp } }));
  const accounts = addAccounts(emulator, options.accountKeys ?? []);
  if (key) registerOnSeededAccount(emulator, key);
  await emulator.marketplace.commit();
  printConnection(emulator);
  // One line an account, its user id named as such: "Further accounts: 2" read as a count.
  accounts.forEach((account, i) => console.log("Account of --account-key #%d: user id %d (%s)", i + 1, account.id, account.email));
  if (key) console.log("SSH key %s registered on the seeded account: each instance's ssh command is printed as it comes up", key.file);
  console.log(rateLimitsLine(emulator));
  booted.splice(0).forEach(showLogin);
  if (!emulator.machines.onstart) {
    console.log(`No emulated machines: ${emulator.machines.why}. Instances' onstart will not run, so maxLifetime and idleTimeout will not end them ` +
      "(the provider warns of it at preview), and their ssh_host/ssh_port serve no SSH.");
  }
  if (emulator.machines.isolation_why) {
    console.log(`The emulated machines cannot run here: ${emulator.machines.isolation_why}. Each instance of an SSH or Jupyter runtype ` +
      "reports exited, saying so, when it would boot.");
  }
  if (emulator.machines.sftp_why) console.log(`No SFTP nor scp on the machines: ${emulator.machines.sftp_why}.`);
  if (emulator.machines.own_network === false) {
    console.log(`Machines share this computer's network: ${emulator.machines.network_why}. Their published ports lead to the ` +
      "container ports on this computer, so two instances serving one port collide.");
  }
  const control = options.controlApi === false ? "off" : `${emulator.url}/_emulator/state${options.controlToken ? " (send the token in X-Emulator-Token)" : ""}`;
  console.log("Control API: %s (Ctrl-C stops the emulator)", control);
  if (options.controlApi !== false) console.log("Console: %s", consoleLine(emulator.url, options.controlToken !== undefined));
  if (options.legacyInstanceListing) console.log("GET /api/v0/instances/ answers as before the live service retired it (--legacy-instance-listing)");
  const reason = await Promise.race([untilSignal(), untilOrphaned()]);
  if (reason === "orphaned") console.log("The process that started the emulator is gone: stopping.");
  await emulator.close();
}

/** An account for each key the emulator does not know yet (a kept state may know them from an earlier start). */
function addAccounts(emulator: RunningEmulator, keys: string[]): { id: number; email: string }[] {
  const { accounts } = emulator.marketplace;
  return keys.map((key, i) => {
    if (accounts.knows(key)) return accounts.authenticate(key).user;
    const user = accounts.addUser({ email: `account-${i + 2}@accounts.gpu-rental.test` });
    accounts.issueKey(user.id, { name: "account", value: key });
    return user;
  });
}

/** The rate limits in force, per key, and how to lift them. */
function rateLimitsLine(emulator: RunningEmulator): string {
  const names = { offer_search: "offer search", instance_create: "instance creation", network_volume_search: "network volume search" };
  const on = Object.entries(emulator.marketplace.rateLimits.settings).filter(([, limit]) => limit.limit > 0);
  if (!on.length) return "Rate limits: off (--no-rate-limits)";
  const each = on.map(([endpoint, { limit, windowMs }]) => `${names[endpoint as keyof typeof names]} ${limit} per ${windowMs / 1000} s`);
  return `Rate limits per key, as the live service's: ${each.join(", ")} (--no-rate-limits lifts them for a fast test)`;
}

/** Resolves when this process's parent has exited (it is then adopted by another, and its parent id changes). */
function untilOrphaned(): Promise<"orphaned"> {
  const parent = process.ppid;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (process.ppid !== parent) {
        clearInterval(timer);
        resolve("orphaned");
      }
    }, 500);
    // The server keeps the process alive while it runs; this watch must not once it is closed.
    timer.unref();
  });
}

/** The console's address, and what its controls need (docs/emulator.md, "The console"). */
export function consoleLine(url: string, withToken: boolean): string {
  const controls = withToken ? "type the control token into it to use its controls" : "its controls need an emulator started with --control-token";
  return `${url}/console (open it in a browser to watch instances, spend and the market; ${controls})`;
}

export function printConnection(emulator: RunningEmulator): void {
  console.log("GPU_RENTAL_API_URL=%s", emulator.url);
  // The seeded user's key is printed once, on purpose: scripts and other clients need it to talk to this
  // local emulator. It is a key of the emulator only, not of the live service.
  console.log("GPU_RENTAL_API_KEY=%s", emulator.apiKey);
  if (emulator.ssh) {
    console.log("SSH: instances are served on %s only (loopback), host key %s; each runs in a machine of its own (Linux namespaces), its files in %s", SSH_HOST, emulator.ssh.hostKeyFile, emulator.ssh.sandboxes);
  }
}

export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    // Both listeners go at the first signal: one left behind would keep the process alive once stopped.
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
