/*
 * failover.h: what the rest of lockstorm asks of the `failover` fault kind
 * (faults/failover.c) about a workload: how its failovers cut replication,
 * which decides how the replicated set is started (through the replication
 * proxy or directly, with iptables rules).
 */
#ifndef LS_FAULTS_FAILOVER_H
#define LS_FAULTS_FAILOVER_H

struct workload;
struct fault_spec;

/* Contract: 1 when w's failover faults cut with iptables, 0 when none
 * does, -1 when some cut with iptables and others through the proxy. */
int failover_uses_iptables(const struct workload *w);

#endif
