"""A template, instances made from it with their own overrides, a network volume attached, and a second account."""
import pulumi
import pulumi_gpu_rental as gpu_rental

config = pulumi.Config()

# One template holds what every worker shares; each instance made from its hash_id overrides what is its own.
template = gpu_rental.Template(
    "worker",
    name="py-fleet-worker",
    image="pytorch/pytorch",
    tag="2.4.0-cuda12.4-cudnn9-runtime",
    desc="A training worker with direct SSH",
    runtype="ssh",
    ssh_direct=True,
    use_ssh=True,
    env="-e WANDB_MODE=offline -e EPOCHS=10 -p 8080:8080",
    onstart="nvidia-smi",
    recommended_disk_space=32,
)

# Datasets live on a network volume that outlives any one instance; the large worker mounts it.
datasets = gpu_rental.NetworkVolume(
    "datasets",
    q={"verified": {"eq": True}, "geolocation": {"in": config.get_object("countries") or ["US", "CA"]}},
    size=config.get_int("volumeGb") or 100,
    name="py-datasets",
)

# The template's values are the base; what an instance declares wins (env is merged key by key).
workers = {
    "small": dict(gpu_model="RTX 4090", disk=32, env={"EPOCHS": "5"}),
    "large": dict(
        gpu_model=config.get("largeGpuModel") or "A100 SXM4",
        disk=128,
        env={"EPOCHS": "50", "SHARDS": "8"},
        volume={"volume_id": datasets.volume_id, "mount_path": "/datasets"},
    ),
}
instances = [
    gpu_rental.Instance(
        f"worker-{name}",
        template_hash_id=template.hash_id,
        label=f"py-fleet-{name}",
        filters={"reliability": {"gte": 0.95}},
        # A volume still attached cannot be deleted: instances go first.
        opts=pulumi.ResourceOptions(depends_on=[datasets]),
        **overrides,
    )
    for name, overrides in workers.items()
]

# The team's account: an explicit provider with its own key (secret stack config teamApiKey), given to its resources.
team = gpu_rental.Provider(
    "team",
    api_url=pulumi.Config("gpu-rental").get("apiUrl"),  # the same service (else GPU_RENTAL_API_URL)
    api_key=config.require_secret("teamApiKey"),
)
team_sandbox = gpu_rental.Instance(
    "team-sandbox",
    image="pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime",
    gpu_model=config.get("teamGpuModel") or "RTX 3090",
    label="py-team-sandbox",
    opts=pulumi.ResourceOptions(provider=team),
)

pulumi.export("templateHashId", template.hash_id)
pulumi.export("instanceIds", [i.instance_id for i in instances])
pulumi.export("ssh", [pulumi.Output.concat("ssh -p ", i.ssh_port.apply(str), " root@", i.ssh_host) for i in instances])
pulumi.export("volumeId", datasets.volume_id)
pulumi.export("teamSandboxId", team_sandbox.instance_id)
