// Types for the one internal kdljs module weir reaches into (see kdl.ts).
export declare const parser: object;
