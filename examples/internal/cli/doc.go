// Package cli is the flag machinery the example servers share: each
// declares its flags as a table of Flag, each flag with the environment
// variable that also sets it, and Parse reads them with one precedence
// (a flag beats its variable, which beats the default) and one way of
// naming a bad value's source. Loopback, List and the log flags
// (LogLevelFlag, LogFormatFlag, Log.Logger) are what both servers need
// around it.
//
//	var flags = []cli.Flag[config]{
//		{Name: "data", Env: "TS_DATA", Default: "./data", Usage: "data directory", Set: func(c *config, v string) error {
//			c.dataDir = v
//			return nil
//		}},
//		cli.LogLevelFlag("TS_LOG_LEVEL", func(c *config) *cli.Log { return &c.log }),
//	}
//	c, err := cli.Parse("server", flags, usage, os.Args[1:], os.Stdout, os.Getenv)
package cli
