module example.com/gpu-rental-go

go 1.25

// The Pulumi SDK of the engine's version; `pulumi install` adds the gpu-rental SDK (generated into sdks/gpu-rental).
require github.com/pulumi/pulumi/sdk/v3 v3.248.0
