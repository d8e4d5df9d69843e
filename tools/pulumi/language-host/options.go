package main

import (
	"fmt"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// programOptions are a program's `runtime.options` in Pulumi.yaml, read by type: a value of the wrong type, or a
// choice the host does not know, is refused naming the option and what it takes.
type programOptions map[string]any

func optionsOf(info *pulumirpc.ProgramInfo) programOptions {
	if info.GetOptions() == nil {
		return programOptions{}
	}
	return info.GetOptions().AsMap()
}

// text is a string option, "" when absent.
func (o programOptions) text(name string) (string, error) {
	raw, given := o[name]
	if !given {
		return "", nil
	}
	if s, ok := raw.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("runtime.options.%s in Pulumi.yaml is %v: it takes a string", name, raw)
}

// flag is a true/false option, fallback when absent.
func (o programOptions) flag(name string, fallback bool) (bool, error) {
	raw, given := o[name]
	if !given {
		return fallback, nil
	}
	if b, ok := raw.(bool); ok {
		return b, nil
	}
	return fallback, fmt.Errorf("runtime.options.%s in Pulumi.yaml is %v: it takes true or false", name, raw)
}

// choice is an option that names one of choices; fallback when absent.
func (o programOptions) choice(name, fallback string, choices ...string) (string, error) {
	value, err := o.text(name)
	if err != nil || value == "" {
		return fallback, err
	}
	for _, c := range choices {
		if value == c {
			return value, nil
		}
	}
	return "", fmt.Errorf("runtime.options.%s in Pulumi.yaml is %q: it takes %s", name, value, strings.Join(choices, ", "))
}
