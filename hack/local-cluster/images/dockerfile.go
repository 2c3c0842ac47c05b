package images

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Stage is what a stage of a Dockerfile says about the image it makes: the
// parts the images of this package copy, so that the image the tests run
// is the image `make docker-build` would make.
type Stage struct {
	// Name is what the stage is called with FROM ... AS; empty if nothing.
	Name         string
	From         string
	User         string
	Entrypoint   []string
	WorkingDir   string
	Labels       map[string]string
	ExposedPorts []string
	// Copies are the COPY instructions, in order.
	Copies []Copy
	// args are the build arguments the stage declares (ARG), with the
	// values they take.
	args map[string]*string
	// buildArgs are the values given to the build (docker build
	// --build-arg).
	buildArgs map[string]string
}

// Copy is one COPY instruction.
type Copy struct {
	// From is the stage it copies from (--from); empty for the build
	// context.
	From string
	// Source and Dest are its one source and its destination.
	Source, Dest string
}

// ParseDockerfile reads the final stage of the Dockerfile at path, the
// image a plain `docker build` makes, with the build arguments buildArgs
// (what `docker build --build-arg` passes). It knows the instructions a
// runtime stage of this project uses and refuses any other, so that a new
// instruction cannot be silently left out of the test image.
func ParseDockerfile(path string, buildArgs map[string]string) (Stage, error) {
	return ParseDockerfileStage(path, "", buildArgs)
}

// ParseDockerfileStage reads the stage called name (`FROM ... AS name`,
// what `docker build --target name` makes) of the Dockerfile at path, or
// the final stage when name is empty, as ParseDockerfile does.
//
// An argument the stage declares (ARG NAME or ARG NAME=default) takes its
// value from buildArgs, else its default, and $NAME and ${NAME} in LABEL,
// COPY, USER, WORKDIR and EXPOSE are replaced with it, as Docker does. Where
// Docker would put an empty string, for an argument with no value or one
// the stage does not declare, the parse fails: an image label or path left
// empty is a mistake.
func ParseDockerfileStage(path, name string, buildArgs map[string]string) (Stage, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Stage{}, err
	}
	// Comment lines go before continuations are joined: as for Docker, one
	// inside a continued instruction does not end it.
	var kept []string
	for line := range strings.Lines(string(raw)) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			kept = append(kept, line)
		}
	}
	lines := strings.Split(continuation.ReplaceAllString(strings.Join(kept, ""), " "), "\n")
	// Every stage is parsed; only the one returned must hold nothing but
	// what the image builder copies, and parse without an error: Docker
	// builds only the stages the target needs, and the build arguments
	// given are those of one target.
	var stages []Stage
	var unknown [][]string
	var errs []error
	for _, line := range lines {
		instr, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		instr, rest = strings.ToUpper(instr), strings.TrimSpace(rest)
		if instr == "FROM" {
			// FROM [--platform=...] image [AS name]
			var f []string
			for _, w := range strings.Fields(rest) {
				if !strings.HasPrefix(w, "--") {
					f = append(f, w)
				}
			}
			if len(f) == 0 {
				return Stage{}, fmt.Errorf("%s: FROM without an image", path)
			}
			st := Stage{From: f[0], Labels: map[string]string{}, args: map[string]*string{}, buildArgs: buildArgs}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.Name = f[2]
			}
			stages, unknown, errs = append(stages, st), append(unknown, nil), append(errs, nil)
			continue
		}
		if instr == "" {
			continue // a blank line
		}
		if len(stages) == 0 {
			if instr == "ARG" {
				continue // an argument for FROM lines
			}
			return Stage{}, fmt.Errorf("%s: no FROM before %s", path, instr)
		}
		known, err := stages[len(stages)-1].apply(instr, rest)
		if err != nil && errs[len(errs)-1] == nil {
			errs[len(errs)-1] = err
		}
		if !known {
			unknown[len(unknown)-1] = append(unknown[len(unknown)-1], instr)
		}
	}
	if len(stages) == 0 {
		return Stage{}, fmt.Errorf("%s: no FROM", path)
	}
	i := len(stages) - 1
	if name != "" {
		i = slices.IndexFunc(stages, func(s Stage) bool { return s.Name == name })
		if i < 0 {
			return Stage{}, fmt.Errorf("%s: no stage %q", path, name)
		}
	}
	if errs[i] != nil {
		return Stage{}, fmt.Errorf("%s: the stage %s: %w", path, stageName(stages[i], i == len(stages)-1), errs[i])
	}
	if len(unknown[i]) > 0 {
		return Stage{}, fmt.Errorf("%s: the stage %s holds %s, which package images does not copy into its image",
			path, stageName(stages[i], i == len(stages)-1), strings.Join(unknown[i], ", "))
	}
	return stages[i], nil
}

// apply records in s what instruction instr with arguments rest says about
// the image; known is false for an instruction this package does not copy
// into an image.
func (s *Stage) apply(instr, rest string) (known bool, err error) {
	switch instr {
	case "LABEL", "COPY", "USER", "WORKDIR", "EXPOSE":
		if rest, err = s.expand(rest); err != nil {
			return true, fmt.Errorf("%s: %w", instr, err)
		}
	}
	switch instr {
	case "USER":
		s.User = rest
	case "WORKDIR":
		s.WorkingDir = rest
	case "ENTRYPOINT":
		if err := json.Unmarshal([]byte(rest), &s.Entrypoint); err != nil {
			return true, fmt.Errorf("ENTRYPOINT must be the exec (JSON) form: %w", err)
		}
	case "EXPOSE":
		for _, p := range strings.Fields(rest) {
			if !strings.Contains(p, "/") {
				p += "/tcp"
			}
			s.ExposedPorts = append(s.ExposedPorts, p)
		}
	case "LABEL":
		if strings.TrimSpace(labelPair.ReplaceAllString(rest, "")) != "" {
			return true, fmt.Errorf("LABEL %s: want key=value pairs, values bare or double-quoted", rest)
		}
		for _, kv := range labelPair.FindAllStringSubmatch(rest, -1) {
			if v, quoted := strings.CutPrefix(kv[2], `"`); quoted {
				kv[2] = strings.ReplaceAll(strings.TrimSuffix(v, `"`), `\"`, `"`)
			}
			s.Labels[kv[1]] = kv[2]
		}
	case "COPY":
		var c Copy
		var args []string
		for _, f := range strings.Fields(rest) {
			if from, ok := strings.CutPrefix(f, "--from="); ok {
				c.From = from
			} else if !strings.HasPrefix(f, "--") {
				args = append(args, f)
			}
		}
		if len(args) != 2 {
			return true, fmt.Errorf("COPY %s: want one source and one destination", rest)
		}
		c.Source, c.Dest = args[0], args[1]
		s.Copies = append(s.Copies, c)
	case "ARG":
		// ARG NAME[=default]: a value for the instructions after it.
		name, def, hasDefault := strings.Cut(rest, "=")
		if v, ok := s.buildArgs[name]; ok {
			s.args[name] = &v
		} else if hasDefault {
			s.args[name] = &def
		} else {
			s.args[name] = nil
		}
	default:
		return false, nil
	}
	return true, nil
}

// expand replaces the build arguments in text, $NAME and ${NAME}, with
// their values.
func (s *Stage) expand(text string) (string, error) {
	var err error
	out := argRef.ReplaceAllStringFunc(text, func(ref string) string {
		name := strings.Trim(ref, "${}")
		v, declared := s.args[name]
		switch {
		case !declared:
			err = fmt.Errorf("%s: the stage declares no ARG %s", ref, name)
		case v == nil:
			err = fmt.Errorf("%s: ARG %s has no default and the build gives it no value", ref, name)
		default:
			return *v
		}
		return ref
	})
	if err == nil && strings.Contains(out, "$") {
		err = fmt.Errorf("%s: only $NAME and ${NAME} references are understood", text)
	}
	return out, err
}

// stageName names a stage in an error.
func stageName(s Stage, final bool) string {
	switch {
	case s.Name != "" && final:
		return fmt.Sprintf("%q (the final one)", s.Name)
	case s.Name != "":
		return fmt.Sprintf("%q", s.Name)
	}
	return "FROM " + s.From + " (the final one)"
}

var (
	// continuation is a backslash that ends a line, which joins it to the next.
	continuation = regexp.MustCompile(`\\[ \t]*\r?\n`)
	// argRef is a reference to a build argument: $NAME or ${NAME}. Docker's
	// ${NAME:-word} forms are not matched: expand refuses the $ they leave.
	argRef = regexp.MustCompile(`\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)`)
	// labelPair is one key=value of LABEL, the value bare or double-quoted
	// with \" inside; an unterminated quote matches nothing, so is refused.
	labelPair = regexp.MustCompile(`([^\s="]+)=("(?:[^"\\]|\\.)*"|[^\s"]*)`)
)
