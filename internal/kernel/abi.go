package kernel

// SocketRulesABI is the first Landlock ABI with the resolve-unix right.
const SocketRulesABI = 9
