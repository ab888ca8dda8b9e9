import { calculatorTool } from './calculator';
import { ToolRegistry } from './tool-registry';

/** The tools every run starts with. */
export function builtinTools(): ToolRegistry {
  return new ToolRegistry([calculatorTool]);
}
