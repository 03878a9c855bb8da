/**
 * What the lab takes from checks/, and the only lab module that imports it (test/build/module-boundaries.test.ts):
 * the versions the product pins for the Python stack (vLLM, Ray, torch and its NCCL) and the cluster venv's path.
 * The lab's offline pip index serves exactly those pins and its scenarios put venvs there, so the nccl, ray and
 * vllm stages meet what they install. Values flow one way: the product never reads the lab. A name added here is
 * a decision that the lab should follow the product on it, not a convenience — say why beside it.
 */
export { CLUSTER_VENV, PINS } from '../checks/common/pins.js';
