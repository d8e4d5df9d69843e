// A Go program: a template, an instance made from it, a fleet of workers, and a second account's instance.
package main

import (
	"github.com/gpu-rental/gpu-rental/sdk/go/gpurental"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")

		// What every worker shares; instances made from its hash id override what is their own.
		template, err := gpurental.NewTemplate(ctx, "worker", &gpurental.TemplateArgs{
			Name:      pulumi.String("go-worker"),
			Image:     pulumi.String("pytorch/pytorch"),
			Tag:       pulumi.String("2.4.0-cuda12.4-cudnn9-runtime"),
			Runtype:   gpurental.TemplateRuntypeSsh,
			SshDirect: pulumi.Bool(true),
			UseSsh:    pulumi.Bool(true),
			Onstart:   pulumi.String("nvidia-smi"),
		})
		if err != nil {
			return err
		}

		label := cfg.Get("label")
		if label == "" {
			label = "trainer"
		}
		trainer, err := gpurental.NewInstance(ctx, "trainer", &gpurental.InstanceArgs{
			TemplateHashId: template.HashId,
			GpuModel:       pulumi.String("RTX 4090"),
			Filters:        pulumi.Map{"reliability": pulumi.Map{"gte": pulumi.Float64(0.95)}},
			Label:          pulumi.String(label),
			Env:            pulumi.StringMap{"EPOCHS": pulumi.String("5")},
		})
		if err != nil {
			return err
		}

		// Workers as one resource: rented together (all or nothing), resized by adding or removing the last ones.
		size := cfg.GetInt("poolSize")
		if size == 0 {
			size = 2
		}
		pool, err := gpurental.NewGpuFleet(ctx, "pool", &gpurental.GpuFleetArgs{
			Size:           pulumi.Int(size),
			TemplateHashId: template.HashId,
			GpuModel:       pulumi.String("RTX 4090"),
		})
		if err != nil {
			return err
		}

		// A second account: an explicit provider with the team's key (a secret in stack config).
		team, err := gpurental.NewProvider(ctx, "team", &gpurental.ProviderArgs{
			ApiUrl: pulumi.StringPtr(config.Get(ctx, "gpu-rental:apiUrl")), // the same service (else GPU_RENTAL_API_URL)
			ApiKey: cfg.RequireSecret("teamApiKey"),
		})
		if err != nil {
			return err
		}
		teamTrainer, err := gpurental.NewInstance(ctx, "team-trainer", &gpurental.InstanceArgs{
			Image:    pulumi.String("pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime"),
			GpuModel: pulumi.String("RTX 3090"),
			Label:    pulumi.String("team-trainer"),
		}, pulumi.Provider(team))
		if err != nil {
			return err
		}

		ctx.Export("instanceId", trainer.InstanceId)
		ctx.Export("ssh", pulumi.Sprintf("ssh -p %d root@%s", trainer.SshPort.Elem(), trainer.SshHost.Elem()))
		ctx.Export("poolIds", pool.InstanceIds)
		ctx.Export("teamInstanceId", teamTrainer.InstanceId)
		return nil
	})
}
