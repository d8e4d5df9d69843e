package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/emptypb"
)

// pluginVersion is what GetPluginInfo reports. It matches the @pulumi/pulumi
// and CLI version this host was written against, so that the engine's
// version bookkeeping looks the same as with the official host.
var pluginVersion = "3.248.0"

// runnerModule is the Node entry point that actually executes a Pulumi
// program: it connects to the resource monitor, sets up ts-node for
// TypeScript and loads the user's code. It ships inside @pulumi/pulumi, so it
// is resolved from the program's own node_modules (the same way the
// pulumi-resource-pulumi-nodejs script resolves cmd/dynamic-provider).
const runnerModule = "@pulumi/pulumi/cmd/run"

// exitCodeAlreadyReported is the exit code the Node runner uses when it has
// already logged the error to the engine (see
// nodeJSProcessExitedAfterLoggingUserActionableMessage in cmd/run/index.js).
// In that case we must "bail": fail the update without adding another,
// less useful error message.
const exitCodeAlreadyReported = 32

// host implements the parts of pulumirpc.LanguageRuntimeServer that
// `pulumi up/preview/refresh/destroy` need for a Node.js program that only
// uses dynamic providers. Every other RPC falls through to the embedded
// Unimplemented server, which the engine treats as "not supported".
type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string // from argv, or from Handshake when attached
	tracing       string // forwarded to the runner as --tracing
}

func newHost(engineAddress, tracing string) *host {
	return &host{engineAddress: engineAddress, tracing: tracing}
}

func (h *host) getEngineAddress() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engineAddress
}

// Handshake is not called when the engine launches us itself (it only probes
// the connection and passes its address on the command line), but it is the
// only way to learn the engine address when the engine attaches to an
// already-running host via PULUMI_DEBUG_LANGUAGES. Supporting it is cheap.
func (h *host) Handshake(
	ctx context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if addr := req.GetEngineAddress(); addr != "" {
		h.mu.Lock()
		h.engineAddress = addr
		h.mu.Unlock()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(ctx context.Context, _ *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: pluginVersion}, nil
}

// GetRequiredPackages reports the resource plugins that the program's
// installed packages declare (see requiredPackages). The dynamic provider
// plugin (pulumi-nodejs) is not among them: the engine finds the
// pulumi-resource-pulumi-nodejs script next to the pulumi binary by itself.
func (h *host) GetRequiredPackages(
	ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	deps, err := requiredPackages(programDir(req.GetInfo(), ""))
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: deps}, nil
}

// programDir is the program's folder from the request's ProgramInfo, or the
// deprecated field that older engines fill instead.
func programDir(info *pulumirpc.ProgramInfo, deprecated string) string {
	if dir := info.GetProgramDirectory(); dir != "" {
		return dir
	}
	return deprecated
}

// GetRequiredPlugins is the deprecated predecessor of GetRequiredPackages,
// answered the same way for engines that still ask it.
func (h *host) GetRequiredPlugins(
	ctx context.Context, req *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	deps, err := requiredPackages(programDir(req.GetInfo(), req.GetProgram())) //nolint:staticcheck // the deprecated field, for older engines
	if err != nil {
		return nil, err
	}
	plugins := make([]*pulumirpc.PluginDependency, 0, len(deps))
	for _, dep := range deps {
		plugins = append(plugins, &pulumirpc.PluginDependency{Kind: dep.Kind, Name: dep.Name, Version: dep.Version, Server: dep.Server})
	}
	return &pulumirpc.GetRequiredPluginsResponse{Plugins: plugins}, nil
}

// InstallDependencies succeeds without doing anything: node_modules is
// installed by the project itself (npm ci), never by the Pulumi CLI.
func (h *host) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest,
	stream pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	return nil
}

// About tells `pulumi about` which node we would run.
func (h *host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("could not find node on PATH: %w", err)
	}
	version, err := nodeVersion(ctx, nodeBin)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{
		Executable: nodeBin,
		Version:    version,
		Metadata:   map[string]string{"languageHost": "gpu-rental minimal nodejs host"},
	}, nil
}

// GetProgramDependencies lists the direct dependencies declared in the
// program's package.json, with the installed version when node_modules has
// it. Transitive dependencies are not reported, even when asked for.
func (h *host) GetProgramDependencies(
	ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	deps, err := directDependencies(programDir(req.GetInfo(), req.GetPwd())) //nolint:staticcheck // the deprecated field, for older engines
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GetProgramDependenciesResponse{Dependencies: deps}, nil
}

// Run executes the program with `node <runner> <flags> <entry point>` and
// waits for it. The Node process inherits our stdout/stderr; the engine reads
// those pipes and shows every line to the user, just as it does for the
// official host.
//
// Errors that concern the program (node missing, @pulumi/pulumi not
// installed, non-zero exit) are returned in RunResponse.Error so that the
// engine reports them as a failed program rather than as a broken plugin.
func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()

	// The engine sets pwd to the directory of Pulumi.yaml's `main` (or the
	// project root) and the entry point to the file name within it, or "."
	// when `main` is absent or a directory. Old engines only send the
	// deprecated Program field.
	pwd := req.GetPwd()
	programDir := info.GetProgramDirectory()
	if programDir == "" {
		programDir = pwd
	}
	entryPoint := info.GetEntryPoint()
	if entryPoint == "" {
		entryPoint = req.GetProgram() //nolint:staticcheck // fallback for old engines
	}
	if entryPoint == "" {
		entryPoint = "."
	}

	opts, err := parseRuntimeOptions(info.GetOptions().AsMap())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not find node on PATH: %v", err)}, nil
	}
	runner, err := resolveModule(ctx, nodeBin, programDir, runnerModule)
	if err != nil {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf(
			"could not find %s from %s (is @pulumi/pulumi installed? run npm ci): %v",
			runnerModule, programDir, err)}, nil
	}

	env, err := runnerEnv(req, opts)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	args := append([]string{}, opts.nodeArgs...)
	args = append(args, runner)
	args = append(args, h.runnerFlags(req, info)...)
	// The runner uses minimist with stopEarly, so the program path and its
	// own arguments must come after all runner flags.
	args = append(args, entryPoint)
	args = append(args, req.GetArgs()...)

	cmd := exec.Command(nodeBin, args...)
	cmd.Dir = pwd
	cmd.Env = env
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr

	runErr := cmd.Run()
	// Node may exit with writes to process.stdout/stderr still buffered on
	// our side of the pipe; flush so the engine sees the error text before it
	// sees our response.
	_ = os.Stdout.Sync()
	_ = os.Stderr.Sync()

	if runErr == nil {
		return &pulumirpc.RunResponse{}, nil
	}
	var exitErr *exec.ExitError
	if !errors.As(runErr, &exitErr) {
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run node: %v", runErr)}, nil
	}
	switch code := exitErr.ExitCode(); code {
	case exitCodeAlreadyReported:
		// The runner has logged the failure through the engine already.
		return &pulumirpc.RunResponse{Bail: true}, nil
	case -1:
		// Killed by a signal (ExitCode is -1 in that case).
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("program was terminated: %v", exitErr)}, nil
	default:
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("program exited with non-zero exit code: %d", code)}, nil
	}
}

// runnerFlags builds the flags understood by @pulumi/pulumi/cmd/run (see its
// usage() and the minimist options in cmd/run/index.js). The `--k=v` form is
// used so that values can never be mistaken for flags.
func (h *host) runnerFlags(req *pulumirpc.RunRequest, info *pulumirpc.ProgramInfo) []string {
	var flags []string
	add := func(name, value string) {
		if value != "" {
			flags = append(flags, "--"+name+"="+value)
		}
	}
	add("monitor", req.GetMonitorAddress())
	// Without --engine the SDK cannot send log messages (and errors) to the
	// engine; they would only appear as raw console output.
	add("engine", h.getEngineAddress())
	add("organization", req.GetOrganization())
	add("project", req.GetProject())
	add("root-directory", info.GetRootDirectory())
	add("stack", req.GetStack())
	add("pwd", req.GetPwd())
	if req.GetDryRun() {
		flags = append(flags, "--dry-run")
	}
	if p := req.GetParallel(); p > 0 {
		add("parallel", strconv.Itoa(int(p)))
	}
	add("tracing", h.tracing)
	return flags
}

// runnerEnv is our environment plus the variables the runner and the SDK read:
// configuration is passed as JSON in PULUMI_CONFIG (keys like "proj:name"),
// the names of secret keys as a JSON array in PULUMI_CONFIG_SECRET_KEYS, and
// PULUMI_NODEJS_TYPESCRIPT / PULUMI_NODEJS_TSCONFIG_PATH tell the runner to
// register ts-node (cmd/run/run.js). Later entries win in os/exec, so these
// override anything inherited.
func runnerEnv(req *pulumirpc.RunRequest, opts runtimeOptions) ([]string, error) {
	config := req.GetConfig()
	if config == nil {
		config = map[string]string{}
	}
	configJSON, err := json.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("could not encode config: %w", err)
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretKeysJSON, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, fmt.Errorf("could not encode secret config keys: %w", err)
	}

	env := os.Environ()
	env = append(env,
		"PULUMI_CONFIG="+string(configJSON),
		"PULUMI_CONFIG_SECRET_KEYS="+string(secretKeysJSON),
	)
	if opts.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}
	return env, nil
}

// runtimeOptions are the `runtime.options` of Pulumi.yaml that we honour.
type runtimeOptions struct {
	// typescript: register ts-node before loading the program. Defaults to
	// true, like the official host; the runner then uses the project's own
	// typescript/ts-node (or the copies vendored in @pulumi/pulumi).
	typescript bool
	// tsconfig: path of the tsconfig file, relative to the program directory.
	tsconfig string
	// nodeargs: extra arguments for node, split on white space (no quoting).
	nodeArgs []string
}

func parseRuntimeOptions(raw map[string]any) (runtimeOptions, error) {
	opts := runtimeOptions{typescript: true}
	for key, value := range raw {
		switch key {
		case "typescript":
			b, ok := value.(bool)
			if !ok {
				return opts, fmt.Errorf("runtime option typescript must be a boolean, got %v", value)
			}
			opts.typescript = b
		case "tsconfig":
			s, ok := value.(string)
			if !ok {
				return opts, fmt.Errorf("runtime option tsconfig must be a string, got %v", value)
			}
			opts.tsconfig = s
		case "nodeargs":
			s, ok := value.(string)
			if !ok {
				return opts, fmt.Errorf("runtime option nodeargs must be a string, got %v", value)
			}
			opts.nodeArgs = strings.Fields(s)
		default:
			// packagemanager and friends only matter for dependency
			// installation, which we do not do.
		}
	}
	return opts, nil
}
