package main

import (
	"fmt"
	"strings"
	"unicode"
)

// A codeStyle says how a program of one language uses an SDK that Link wired in: the line for each SDK, and
// the instructions the engine prints after `pulumi package add`.
type codeStyle struct {
	language string
	line     func(alias, module string) string
}

var (
	importStyle  = codeStyle{"TypeScript", func(alias, module string) string { return fmt.Sprintf("import * as %s from %q;", alias, module) }}
	requireStyle = codeStyle{"JavaScript", func(alias, module string) string { return fmt.Sprintf("const %s = require(%q);", alias, module) }}
	pythonStyle  = codeStyle{"Python", func(alias, module string) string { return "import " + module + " as " + alias }}
	goStyle      = codeStyle{"Go", func(_, module string) string { return fmt.Sprintf("import %q", module) }}
)

func (c codeStyle) usage(lines []string) string {
	return fmt.Sprintf("The SDK is part of the program now. In its %s code:\n\n    %s\n", c.language, strings.Join(lines, "\n    "))
}

// identifier is a package name (gpu-rental) as a camel-case identifier (gpuRental), for JavaScript aliases.
func identifier(name string) string {
	var out strings.Builder
	upper := false
	for _, r := range name {
		switch {
		case r == '-' || r == '_' || r == '.':
			upper = out.Len() > 0
		case upper:
			out.WriteRune(unicode.ToUpper(r))
			upper = false
		default:
			out.WriteRune(r)
		}
	}
	return out.String()
}
