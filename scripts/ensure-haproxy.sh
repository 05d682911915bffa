#!/usr/bin/env bash
# Installs Debian's HAProxy when it is missing and we may install (root): the replica test and
# `make run-replicas` put it in front of the servers as a real round-robin load balancer.
exec bash "$(dirname "$0")/ensure-deb.sh" haproxy
