// Package respprom exports a RESP server's statistics to Prometheus: the
// calls, errors and latency histogram of every command (what INFO
// commandstats and latencystats show), and the connection totals.
//
//	reg.MustRegister(respprom.NewCollector(srv))
//
// Metrics (with the default namespace "temporalstore"):
//
//	temporalstore_resp_command_duration_seconds{command}   histogram of the calls' server time
//	temporalstore_resp_command_failed_total{command}       calls that replied with an error
//	temporalstore_resp_command_rejected_total{command}     calls refused before running
//	temporalstore_resp_connected_clients                   open connections
//	temporalstore_resp_connections_received_total          connections accepted
//	temporalstore_resp_commands_processed_total            commands run
//	temporalstore_resp_error_replies_total                 error replies sent
//
// The counters restart from zero after CONFIG RESETSTAT, as Redis's do;
// Prometheus's rate() takes such a reset as a counter restart.
package respprom
