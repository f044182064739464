package config

// FlagSpec maps a command-line flag onto a parameter. cmd/svcdb defines the
// flags (no package outside cmd/ does) and applies them with ApplyFlag after
// LoadFile and LoadEnv, so that flags win.
type FlagSpec struct {
	Flag  string      // the flag's name without dashes: "http-port"
	Param string      // the parameter it sets
	Also  [][2]string // parameters set along with it when the flag is given: --http-port turns the HTTP server on
	Usage string      // help text: the parameter's Doc, allowed values and TOML location
}

// flagTable lists the flags that set parameters.
var flagTable = []FlagSpec{
	{Flag: "port", Param: "port"},
	{Flag: "bind", Param: "bind"},
	{Flag: "shards", Param: "shards"},
	{Flag: "event-loops", Param: "event-loops"},
	{Flag: "maxclients", Param: "maxclients"},
	{Flag: "timeout", Param: "timeout"},
	{Flag: "requirepass", Param: "requirepass"},
	{Flag: "protected-mode", Param: "protected-mode"},
	{Flag: "enable-debug-command", Param: "enable-debug-command"},
	{Flag: "http-port", Param: "http-port", Also: [][2]string{{"http-enabled", "yes"}}},
	{Flag: "http-bind", Param: "http-bind"},
	{Flag: "http-token", Param: "http-token"},
	{Flag: "loglevel", Param: "loglevel"},
	{Flag: "data-dir", Param: "data-dir"},
	{Flag: "save", Param: "save"},
	{Flag: "appendonly", Param: "appendonly"},
	{Flag: "appendfsync", Param: "appendfsync"},
	{Flag: "maxmemory", Param: "maxmemory"},
	{Flag: "maxmemory-policy", Param: "maxmemory-policy"},
}

// Flags returns the parameter flags with their usage text.
func (r *Registry) Flags() []FlagSpec {
	out := make([]FlagSpec, len(flagTable))
	for i, f := range flagTable {
		p := r.must(f.Param)
		f.Usage = p.Doc + " ([" + p.Table + "] " + p.Key
		if a := p.Allowed(); a != "" && p.Kind != Bool {
			f.Usage += "; " + a
		}
		if !p.Secret {
			f.Usage += "; default " + tomlValue(p, p.Default)
		}
		f.Usage += ")"
		out[i] = f
	}
	return out
}

// ApplyFlag sets the parameter of the named flag (and its Also parameters)
// with SourceFlag. Errors are *ConfigError naming the flag:
// "flag --port: [server] port: value 70000 out of range; allowed 0..65535".
func (r *Registry) ApplyFlag(flag, value string) error {
	for _, f := range flagTable {
		if f.Flag != flag {
			continue
		}
		at := origin{flag: "--" + flag}
		if err := r.setStartup(f.Param, value, SourceFlag, at); err != nil {
			return err
		}
		for _, kv := range f.Also {
			if err := r.setStartup(kv[0], kv[1], SourceFlag, at); err != nil {
				return err
			}
		}
		return nil
	}
	return &ConfigError{Flag: "--" + flag, Msg: "not a parameter flag"}
}
