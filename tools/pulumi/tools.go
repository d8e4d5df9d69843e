//go:build tools

// Package tools pins the Pulumi CLI as a dependency of this wrapper module. `go install pkg@version` refuses
// the CLI's own module (its go.mod has relative replace directives); requiring it from here works, because
// replace directives of dependencies are ignored. The non-relative replaces of Pulumi's go.mod are copied in
// our go.mod so that the build resolves the same modules.
package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
