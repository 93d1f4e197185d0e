package ferricmount

import (
	"github.com/temporalstore/temporalstore-go/ferricstore/commands"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
)

// Mount adapts ferricstore's verbs to the RESP server's command table
// (resp.Options.Commands).
func Mount(cmds []commands.Command) []resp.Command {
	out := make([]resp.Command, 0, len(cmds))
	for _, c := range cmds {
		run := c.Run
		out = append(out, resp.Command{Name: c.Name, Arity: c.Arity, Write: c.Write, Connection: c.Connection, FirstKey: c.FirstKey,
			LastKey: c.LastKey, KeyStep: c.KeyStep, Group: c.Group, Summary: c.Summary, Run: func(r *resp.Request) {
				run(r.Context(), commands.Call{Args: r.Args, Protocol: r.Protocol(), NoBlock: !r.MayBlock(), Conn: r}, r.Reply())
			}})
	}
	return out
}
