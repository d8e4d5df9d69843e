package main

import (
	"encoding/json"
	"strconv"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// A setting is one thing the engine tells a program when it starts it, by our own name for it. The engine's
// RunRequest is read once, into a launch; each runtime then hands the settings over in the form its SDK reads,
// by a table from these names to its own (handover below), so no runtime builds its list by hand.
type setting string

const (
	monitorAddress setting = "monitor"       // the engine's resource monitor (gRPC), where resources are registered
	engineAddress  setting = "engine"        // the engine's own service (logging)
	organization   setting = "organization"  // the stack's organization
	project        setting = "project"       // Pulumi.yaml's name
	stack          setting = "stack"         // the stack's name
	rootDirectory  setting = "rootDirectory" // the folder of Pulumi.yaml
	preview        setting = "dryRun"        // "true" during preview
	parallelism    setting = "parallel"      // how many resource operations the engine runs at once
	tracingURL     setting = "tracing"       // where the engine collects traces (the host's --tracing flag)
)

// settingsInOrder lists the settings in a fixed order, so every form comes out the same for the same request.
var settingsInOrder = []setting{monitorAddress, engineAddress, organization, project, stack, rootDirectory, preview, parallelism, tracingURL}

// A launch is what one run of a program is handed: the engine's settings (only those it gave), the stack's
// config, and where and how to start the program.
type launch struct {
	settings map[setting]string
	// config is the stack's config, keys `project:key`; secretKeys name those that are secrets.
	config     map[string]string
	secretKeys []string
	// dir is the program's folder and working directory; entry is Pulumi.yaml's `main` within it ("." for the
	// folder itself); args are the program's own arguments.
	dir   string
	entry string
	args  []string
}

// launchOf reads a RunRequest: engine is the engine's address and tracing the host's --tracing flag, which the
// request does not carry.
func launchOf(req *pulumirpc.RunRequest, engine, tracing string) launch {
	info := req.GetInfo()
	given := map[setting]string{
		monitorAddress: req.GetMonitorAddress(),
		engineAddress:  engine,
		organization:   req.GetOrganization(),
		project:        req.GetProject(),
		stack:          req.GetStack(),
		rootDirectory:  info.GetRootDirectory(),
		preview:        strconv.FormatBool(req.GetDryRun()),
		tracingURL:     tracing,
	}
	if req.GetParallel() > 0 {
		given[parallelism] = strconv.Itoa(int(req.GetParallel()))
	}
	for name, value := range given {
		if value == "" {
			delete(given, name)
		}
	}
	l := launch{settings: given, config: req.GetConfig(), secretKeys: req.GetConfigSecretKeys(), dir: programDir(info), entry: info.GetEntryPoint(), args: req.GetArgs()}
	if l.config == nil {
		l.config = map[string]string{}
	}
	if l.secretKeys == nil {
		l.secretKeys = []string{}
	}
	if l.entry == "" {
		l.entry = "."
	}
	return l
}

// handover is how a runtime's SDK takes the settings: under which name each one it reads (those it does not
// read are left out), and how a name and a value are written together (for form).
type handover struct {
	names map[setting]string
	write func(name, value string) string
}

// form is the launch's settings as one runtime takes them, written one by one in a fixed order.
func (l launch) form(h handover) []string {
	named := l.named(h)
	var out []string
	for _, s := range settingsInOrder {
		if name, reads := h.names[s]; reads && named[name] != "" {
			out = append(out, h.write(name, named[name]))
		}
	}
	return out
}

// named is the launch's settings that a runtime reads, under its names for them.
func (l launch) named(h handover) map[string]string {
	named := map[string]string{}
	for s, value := range l.settings {
		if name, reads := h.names[s]; reads {
			named[name] = value
		}
	}
	return named
}

// configEnv is the stack's config in the two variables every Pulumi SDK reads it from (JSON: an object of
// `project:key` to value, and an array of the secret keys).
func (l launch) configEnv() []string {
	config, _ := json.Marshal(l.config)
	secrets, _ := json.Marshal(l.secretKeys)
	return []string{"PULUMI_CONFIG=" + string(config), "PULUMI_CONFIG_SECRET_KEYS=" + string(secrets)}
}
