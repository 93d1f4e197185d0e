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
		rc := resp.Command{Name: c.Name, Arity: c.Arity, Write: c.Write, Connection: c.Connection, FirstKey: c.FirstKey,
			LastKey: c.LastKey, KeyStep: c.KeyStep, Group: c.Group, Summary: c.Summary, Run: func(r *resp.Request) {
				run(r.Context(), call(r), r.Reply())
			}}
		if many := c.RunMany; many != nil {
			rc.RunMany = func(rs []*resp.Request) {
				calls := make([]commands.Call, len(rs))
				for i, r := range rs {
					calls[i] = call(r)
				}
				many(rs[0].Context(), calls, rs[0].Reply())
			}
		}
		out = append(out, rc)
	}
	return out
}

// call is the ferricstore call of a RESP request.
func call(r *resp.Request) commands.Call {
	return commands.Call{Args: r.Args, Protocol: r.Protocol(), NoBlock: !r.MayBlock(), Conn: r}
}
