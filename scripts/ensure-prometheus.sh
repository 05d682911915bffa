#!/usr/bin/env bash
# Installs Debian's Prometheus when promtool is missing and we may install (root): make test checks
# the alert and recording rules of deploy/monitoring with promtool (check rules, test rules).
exec bash "$(dirname "$0")/ensure-deb.sh" prometheus promtool
