#!/usr/bin/env node
// The bin entry: run and hand the exit code to Node, which flushes output before it exits.
import { main } from './main.js';

process.exitCode = await main(process.argv);
