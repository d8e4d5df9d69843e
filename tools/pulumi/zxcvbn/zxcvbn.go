// Package zxcvbn stands in for github.com/nbutton23/zxcvbn-go in the Pulumi CLI the toolchain builds (a `replace`
// in ../go.mod). The CLI links two copies of that password-strength estimator, this one (for `pulumi config set`'s
// "looks like a secret" warning) and its maintained fork github.com/ccojocar/zxcvbn-go (for esc), and each copy
// builds its word lists when the process starts, memory and time on every `pulumi` command. This package
// answers with the fork, the same algorithm, so the CLI builds the lists once.
package zxcvbn

import (
	fork "github.com/ccojocar/zxcvbn-go"
	"github.com/ccojocar/zxcvbn-go/match"
	"github.com/ccojocar/zxcvbn-go/scoring"
)

// PasswordStrength is the fork's: the entropy of password, knowing the userInputs, and how it was matched.
func PasswordStrength(password string, userInputs []string, filters ...func(match.Matcher) bool) scoring.MinEntropyMatch {
	return fork.PasswordStrength(password, userInputs, filters...)
}
