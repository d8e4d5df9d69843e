//go:build tools

// Package tools pins Pulumi's YAML language host (pulumi-language-yaml), a published module, for the toolchain to
// build. It is a module of its own because its Pulumi modules (pkg/v3 and sdk/v3 v3.206) are older than the CLI's
// (tools/pulumi), and their APIs differ: the two cannot share one build list.
package tools

import _ "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml"
