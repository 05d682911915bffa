package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// setting is one row of the settings table (settings.go): the one place a setting is declared.
// Its flag, its environment variable, its default, its line in -h, its row in
// docs/configuration.md and the check of its value all come from the row, so adding a setting is
// adding a row, and no two of those can disagree.
type setting struct {
	flag string // the flag without its dash; empty for a variable only the Go runtime reads
	env  string // the environment variable that sets the flag's default
	// former is a deprecated name of env, read when env is unset (a renamed setting keeps
	// working for the operators who set the old name).
	former string
	help   string // the -h line
	// doc is the meaning column of docs/configuration.md; empty: help.
	doc string
	// docDefault is the default column when the default is not a plain value (a dev-mode value,
	// one that depends on the mode); empty: the default as it is.
	docDefault string
	// docRow, when set, replaces the whole docs row (flag, environment, default, meaning columns):
	// one row documents a family of settings (AUTH_<NAME>_CID). hidden: a member of the family
	// documented by the row before it.
	docRow *[4]string
	hidden bool
	// bounded: the row checks its value beyond its type.
	bounded bool

	def     string             // the default as the docs show it
	reset   func()             // puts the default in the field
	parse   func(string) error // sets the field from text; the error says what is wanted
	value   flag.Value         // the field as a flag
	isZero  func() bool        // the field holds its type's zero (unset)
	check   func() error       // the field's own bounds, naming the variable
	devFill func()             // dev mode's value for an unset field (nil: none)
	// given: the environment (env or former) or a flag set the setting; loadSettings records it,
	// so a dev-mode default never replaces a value an operator chose, whatever the value.
	given bool
	prod  func() error // what prod mode needs of the field (nil: nothing)
}

// settingType is what a setting's field may be.
type settingType interface {
	string | Secret | CredURI | int | int64 | bool | time.Duration
}

// set declares the setting env (flag -flag) over the field p with default def and -h line help;
// each check returns what a bad value should have been ("want at least 1"), or "".
func set[T settingType](flagName, env string, p *T, def T, help string, checks ...func(T) string) *setting {
	s := &setting{flag: flagName, env: env, help: help, def: showDefault(def), bounded: len(checks) > 0}
	s.reset = func() { *p = def }
	s.parse = func(v string) error { return parseInto(v, p) }
	s.value = value[T]{p}
	s.isZero = func() bool { var zero T; return *p == zero }
	s.check = func() error {
		for _, c := range checks {
			if want := c(*p); want != "" {
				return fmt.Errorf("%s=%s: %s", env, showValue(*p), want)
			}
		}
		return nil
	}
	return s
}

// setList declares the comma-separated list setting env (flag -flag) over the field p, empty by
// default: its items trimmed, without empty ones (a, b,,c is a, b and c). A list of secrets
// (kit.Secrets) is masked where it is shown, as a Secret is.
func setList[T ~[]string](flagName, env string, p *T, help string) *setting {
	s := &setting{flag: flagName, env: env, help: help, def: "empty"}
	s.reset = func() { *p = nil }
	s.parse = func(v string) error { *p = splitList(v); return nil }
	s.value = listValue[T]{p}
	s.isZero = func() bool { return len(*p) == 0 }
	s.check = func() error { return nil }
	return s
}

// listValue is a list setting's field as a flag.Value.
type listValue[T ~[]string] struct{ p *T }

func (v listValue[T]) String() string {
	if v.p == nil {
		return ""
	}
	if s, ok := any(*v.p).(fmt.Stringer); ok {
		return s.String() // kit.Secrets, masked
	}
	return strings.Join(*v.p, ",")
}

func (v listValue[T]) Set(s string) error { *v.p = splitList(s); return nil }

// splitList is a comma-separated setting's items, trimmed, without empty ones.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// envOnly declares a variable read by the Go runtime or before the settings load (GOGC): it has
// no flag and no field, only its docs row.
func envOnly(env, def, doc string) *setting {
	return &setting{env: env, docDefault: def, doc: doc}
}

// docs sets the meaning column of the docs row.
func (s *setting) docs(text string) *setting { s.doc = text; return s }

// defaultDoc sets the default column of the docs row.
func (s *setting) defaultDoc(text string) *setting { s.docDefault = text; return s }

// family makes the row document a family of settings; the members after it are hidden.
func (s *setting) family(flagCol, envCol, defaultCol, meaning string) *setting {
	s.docRow = &[4]string{flagCol, envCol, defaultCol, meaning}
	return s
}

// formerly names a deprecated variable read when env is unset.
func (s *setting) formerly(env string) *setting { s.former = env; return s }

// member hides the row: the family row before it documents it.
func (s *setting) member() *setting { s.hidden = true; return s }

// devDefault gives the setting a value in dev mode when it is unset (neither in the environment
// nor a flag) or empty; fill is called then, and the start-up log names the value it gave.
func (s *setting) devDefault(fill func()) *setting { s.devFill = fill; return s }

// devLimit gives a limit dev mode's generous default dev (devDefault), named in -h and in the docs'
// default column beside prod's.
func (s *setting) devLimit(p *int, dev int) *setting {
	s.help += "; in dev mode " + strconv.Itoa(dev) + " unless set"
	s.docDefault = s.def + ", dev mode `" + strconv.Itoa(dev) + "` unless set"
	return s.devDefault(func() { *p = dev })
}

// devUnset reports whether dev mode's default applies: the row has one, and the setting was not
// given or was given empty.
func (s *setting) devUnset() bool { return s.devFill != nil && (!s.given || s.isZero()) }

// prodNeeds makes prod mode refuse the start without the setting (a plain string).
func (s *setting) prodNeeds() *setting {
	s.prod = func() error {
		if s.isZero() {
			return fmt.Errorf("prod mode needs %s", s.env)
		}
		return nil
	}
	return s
}

// prodSecret makes prod mode check the secret v: at least minLen characters and no published
// value, and present when required.
func (s *setting) prodSecret(v *Secret, minLen int, required bool) *setting {
	s.prod = func() error { return checkProdSecret(s.env, *v, minLen, required) }
	return s
}

// atLeast is the check of a lower bound.
func atLeast[T int | int64 | time.Duration](lo T) func(T) string {
	return func(v T) string {
		if v < lo {
			return "want at least " + showValue(lo)
		}
		return ""
	}
}

// within is the check of a range, with what the ends mean (want 0 (any free port) to 65535).
func within(lo, hi int, want string) func(int) string {
	return func(v int) string {
		if v < lo || v > hi {
			return want
		}
		return ""
	}
}

// oneOf is the check of a value among a few, ignoring case.
func oneOf(values ...string) func(string) string {
	return func(v string) string {
		if slices.Contains(values, strings.ToLower(v)) {
			return ""
		}
		return "want " + strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
	}
}

// parsed is the check of a value that must parse: parse's error says what is wrong.
func parsed(parse func(string) error) func(string) string {
	return func(v string) string {
		if err := parse(v); err != nil {
			return err.Error()
		}
		return ""
	}
}

// value is a setting's field as a flag.Value.
type value[T settingType] struct{ p *T }

func (v value[T]) String() string {
	if v.p == nil {
		return ""
	}
	return showValue(*v.p)
}

func (v value[T]) Set(s string) error { return parseInto(s, v.p) }

// IsBoolFlag lets a bool flag stand alone (-auth-secure-cookies).
func (v value[T]) IsBoolFlag() bool { _, ok := any(v.p).(*bool); return ok }

// parseInto reads s as p's type; the error says what the type wants.
func parseInto[T settingType](s string, p *T) error {
	switch p := any(p).(type) {
	case *string:
		*p = s
	case *Secret:
		*p = Secret(s)
	case *CredURI:
		*p = CredURI(s)
	case *bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("want true or false")
		}
		*p = b
	case *int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return errors.New("want a whole number")
		}
		*p = n
	case *int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errors.New("want a whole number")
		}
		*p = n
	case *time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return errors.New("want a duration such as 90s, 15m or 24h (units ns, us, ms, s, m, h)")
		}
		*p = d
	}
	return nil
}

// showValue is v as a person writes it: a duration without its zero units (24h, not 24h0m0s), a
// secret masked.
func showValue[T settingType](v T) string {
	switch v := any(v).(type) {
	case time.Duration:
		s := v.String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		return s
	case Secret:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}

// showDefault is the default column of a plain default: empty, or the value in code style.
func showDefault[T settingType](v T) string {
	var zero T
	if _, isBool := any(v).(bool); v == zero && !isBool {
		if _, isText := any(v).(string); isText {
			return "empty"
		}
		if _, isSecret := any(v).(Secret); isSecret {
			return "empty"
		}
		if _, isURI := any(v).(CredURI); isURI {
			return "empty"
		}
	}
	return "`" + showValue(v) + "`"
}

// loadSettings puts each setting's default in its field, then the environment's value, then
// parses args as flags over them; a malformed value anywhere is an error naming it. usage, when
// not nil, is where -h prints.
func loadSettings(rows []*setting, args []string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	var errs []error
	for _, s := range rows {
		if s.reset == nil {
			continue // the runtime's
		}
		s.reset()
		s.given = false
		name := s.env
		v, ok := os.LookupEnv(name)
		if !ok && s.former != "" {
			name = s.former
			v, ok = os.LookupEnv(name)
		}
		if ok {
			s.given = true
			if err := s.parse(v); err != nil {
				shown := strconv.Quote(v)
				if _, secret := s.value.(value[Secret]); secret {
					shown = `"***"`
				}
				errs = append(errs, fmt.Errorf("%s=%s: %w", name, shown, err))
			}
		}
		fs.Var(s.value, s.flag, s.help+" ("+s.env+")")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	byFlag := map[string]*setting{}
	for _, s := range rows {
		if s.flag != "" {
			byFlag[s.flag] = s
		}
	}
	fs.Visit(func(f *flag.Flag) { byFlag[f.Name].given = true })
	return errors.Join(errs...)
}

// settingsDocs is the table of docs/configuration.md, one row per documented setting.
func settingsDocs(rows []*setting) string {
	var b strings.Builder
	b.WriteString("| Flag | Environment | Default | Meaning |\n|---|---|---|---|\n")
	for _, s := range rows {
		if s.hidden {
			continue
		}
		cols := [4]string{"—", "`" + s.env + "`", s.def, s.help}
		if s.flag != "" {
			cols[0] = "`-" + s.flag + "`"
		}
		if s.docDefault != "" {
			cols[2] = s.docDefault
		}
		if s.doc != "" {
			cols[3] = s.doc
		}
		if s.docRow != nil {
			cols = *s.docRow
		}
		b.WriteString("| " + strings.Join(cols[:], " | ") + " |\n")
	}
	return b.String()
}
