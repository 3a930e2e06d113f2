// What updatePet and deletePet response when the store refused a change: 404, 412 or 409.
import type { PetChange } from "../db/pets.ts";
import { ApiError } from "../errors.ts";
import { IF_MATCH } from "../http/etag.ts";
import { PET_TRANSITIONS } from "../pets/schemas.ts";

/** The error for a change of pet `petId` that wrote nothing, and why. */
export function refusal(petId: number, outcome: Exclude<PetChange, { kind: "changed" }>): ApiError {
  switch (outcome.kind) {
    case "not_found":
      return new ApiError("not_found", `No animal has petId ${petId}.`);
    case "precondition_failed":
      return new ApiError(
        "precondition_failed",
        `Animal ${petId} changed since its "${IF_MATCH}" tag was read: nothing was changed.`,
      );
    case "invalid_transition": {
      const next = PET_TRANSITIONS[outcome.from];
      const allowed =
        next.length > 0 ? `it may become ${next.join(" or ")}` : `"${outcome.from}" is final`;
      return new ApiError(
        "invalid_transition",
        `Field "status" cannot go from "${outcome.from}" to "${outcome.to}": ${allowed}.`,
        {
          details: [
            { field: "status", message: `cannot go from "${outcome.from}" to "${outcome.to}"` },
          ],
        },
      );
    }
  }
}
