import * as pulumi from "@pulumi/pulumi";
import type { Account } from "./account";
import { Instance, InstanceArgs } from "./instance";

export interface GpuFleetArgs extends Omit<InstanceArgs, "adoptId" | "offerId" | "label"> {
  /**
   * How many instances. Changing it adds instances at the end or removes the last ones; the others are
   * untouched (each instance is a child named `<fleet>-<index>`).
   */
  size: number;
  /** Each instance is labelled `<labelPrefix>-<index>`. Default: the fleet's name. */
  labelPrefix?: string;
}

export interface GpuFleetOptions extends pulumi.ComponentResourceOptions {
  /** The account its instances are rented in; default the provider's account. */
  account?: Account;
}

export interface SshEndpoint {
  instanceId: number;
  host: string | null;
  port: number | null;
}

/**
 * `size` instances of one template and criteria, rented at once without competing for offers. A component,
 * with no logic of its own: each instance is an `Instance` child, so each is diffed, updated and replaced on
 * its own, and resizing touches only the instances added or removed.
 */
export class GpuFleet extends pulumi.ComponentResource {
  readonly instances: Instance[];
  readonly instanceIds: pulumi.Output<number[]>;
  /** Where to reach each instance over SSH, in index order. */
  readonly sshEndpoints: pulumi.Output<SshEndpoint[]>;

  constructor(name: string, args: GpuFleetArgs, opts: GpuFleetOptions = {}) {
    super("gpu-rental:index:GpuFleet", name, {}, opts);
    const { size, labelPrefix, ...instanceArgs } = args;
    if (!Number.isInteger(size) || size < 0 || size > 1000) {
      throw new Error(`GpuFleet ${name}: size must be a whole number from 0 to 1000 (a plain number, known when the program runs), got ${size}`);
    }
    const { account } = opts;
    this.instances = Array.from(
      { length: size },
      (_, i) => new Instance(`${name}-${i}`, { ...instanceArgs, label: `${labelPrefix ?? name}-${i}` }, { parent: this, account }),
    );
    this.instanceIds = pulumi.all(this.instances.map((i) => i.instanceId));
    this.sshEndpoints = pulumi.all(
      this.instances.map((i) => pulumi.all([i.instanceId, i.sshHost, i.sshPort]).apply(([instanceId, host, port]) => ({ instanceId, host, port }))),
    );
    this.registerOutputs({ instanceIds: this.instanceIds, sshEndpoints: this.sshEndpoints });
  }
}
